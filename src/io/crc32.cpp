#include "io/crc32.h"

#include <zlib.h>

#include <cstdio>

namespace kiln {

void Crc32::update(const void* data, size_t size) {
  m_crc = static_cast<uint32_t>(crc32_z(m_crc, static_cast<const Bytef*>(data), size));
}

std::string Crc32::hex() const {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", m_crc);
  return text;
}

}  // namespace kiln
