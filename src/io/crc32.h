// CRC-32 (zlib's: the one ZIP, gzip and PNG use) over a stream of byte ranges, for checksums of committed files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln {

class Crc32 {
 public:
  void update(const void* data, size_t size);
  // Continues the stream with a block of `size` bytes whose own CRC-32 is `block_crc` (as update() on them would).
  void append(uint32_t block_crc, size_t size);
  uint32_t value() const { return m_crc; }
  std::string hex() const;  // 8 lowercase hex digits

 private:
  uint32_t m_crc = 0;
};

// The CRC-32 of a whole file, read in blocks (8 lowercase hex digits). IoError when it cannot be read.
Result<std::string> file_crc32(const std::string& path);

}  // namespace kiln
