// CRC-32 (zlib's: the one ZIP, gzip and PNG use) over a stream of byte ranges, for checksums of committed files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {

class Crc32 {
 public:
  void update(const void* data, size_t size);
  uint32_t value() const { return m_crc; }
  std::string hex() const;  // 8 lowercase hex digits

 private:
  uint32_t m_crc = 0;
};

}  // namespace kiln
