#include "io/crc32.h"

#include <zlib.h>

#include <cstdio>
#include <vector>

#include "io/crc32_clmul.h"

namespace kiln {

namespace {

bool has_clmul() {
  static const bool has = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return has;
}

}  // namespace

// Whole 16-byte blocks by carry-less multiplication where the CPU has it (zlib 1.2.13's table-driven crc32 is
// several times slower), the rest by zlib; the same CRC either way.
void Crc32::update(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (size >= 64 && has_clmul()) {
    const size_t bulk = size & ~size_t{15};
    m_crc = ~crc32_clmul_fold(~m_crc, bytes, bulk);
    bytes += bulk;
    size -= bulk;
  }
  m_crc = static_cast<uint32_t>(crc32_z(m_crc, bytes, size));
}

void Crc32::append(uint32_t block_crc, size_t size) {
  m_crc = static_cast<uint32_t>(crc32_combine(m_crc, block_crc, static_cast<z_off_t>(size)));
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
