#include "io/crc32.h"

#include <zlib.h>

#include <cstdio>
#include <vector>

namespace kiln {

void Crc32::update(const void* data, size_t size) {
  m_crc = static_cast<uint32_t>(crc32_z(m_crc, static_cast<const Bytef*>(data), size));
}

std::string Crc32::hex() const {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", m_crc);
  return text;
}

Result<std::string> file_crc32(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return io_error(path + ": cannot read");
  Crc32 crc;
  std::vector<char> block(size_t{1} << 20);
  size_t got = 0;
  while ((got = std::fread(block.data(), 1, block.size(), file)) > 0) crc.update(block.data(), got);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return io_error(path + ": read failed");
  return crc.hex();
}

}  // namespace kiln
