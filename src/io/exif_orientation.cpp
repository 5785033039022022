#include "io/exif_orientation.h"

#include <cstring>

namespace kiln {

namespace {

struct TiffReader {
  const uint8_t* data;
  size_t size;
  bool little;

  bool u16(size_t at, uint32_t* v) const {
    if (at > size || size - at < 2) return false;
    *v = little ? data[at] | (data[at + 1] << 8) : (data[at] << 8) | data[at + 1];
    return true;
  }
  bool u32(size_t at, uint32_t* v) const {
    if (at > size || size - at < 4) return false;
    const uint8_t* p = data + at;
    *v = little ? p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t{p[3]} << 24)
                : (uint32_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
    return true;
  }
};

constexpr uint32_t kOrientationTag = 0x0112;
constexpr uint32_t kTypeShort = 3;

}  // namespace

int32_t exif_orientation(const uint8_t* block, size_t size) {
  if (block == nullptr) return 1;
  if (size >= 6 && std::memcmp(block, "Exif\0\0", 6) == 0) {
    block += 6;
    size -= 6;
  }
  if (size < 8) return 1;
  TiffReader tiff{block, size, block[0] == 'I'};
  if (!((block[0] == 'I' && block[1] == 'I') || (block[0] == 'M' && block[1] == 'M'))) return 1;
  uint32_t magic = 0;
  uint32_t ifd = 0;
  uint32_t entries = 0;
  if (!tiff.u16(2, &magic) || magic != 42 || !tiff.u32(4, &ifd) || !tiff.u16(ifd, &entries)) return 1;
  for (uint32_t i = 0; i < entries; ++i) {
    const size_t entry = size_t{ifd} + 2 + size_t{i} * 12;
    uint32_t tag = 0;
    uint32_t type = 0;
    uint32_t count = 0;
    uint32_t value = 0;
    if (!tiff.u16(entry, &tag) || !tiff.u16(entry + 2, &type) || !tiff.u32(entry + 4, &count)) return 1;
    if (tag != kOrientationTag) continue;
    if (type != kTypeShort || count != 1 || !tiff.u16(entry + 8, &value)) return 1;
    return value >= 1 && value <= 8 ? static_cast<int32_t>(value) : 1;
  }
  return 1;
}

}  // namespace kiln
