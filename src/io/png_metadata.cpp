#include "io/png_metadata.h"

#include <zlib.h>

#include <cstring>

#include "io/exif_orientation.h"

namespace kiln {

namespace {

constexpr size_t kMaxProfileBytes = size_t{16} << 20;

uint32_t png_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// iCCP: a name of 1-79 bytes, a zero, the compression method (0: zlib), the compressed profile.
std::vector<uint8_t> png_iccp_inflate(const uint8_t* chunk, size_t size) {
  const void* zero = std::memchr(chunk, 0, size < 81 ? size : 81);
  if (zero == nullptr) return {};
  const size_t at = static_cast<size_t>(static_cast<const uint8_t*>(zero) - chunk) + 2;
  if (at > size || chunk[at - 1] != 0) return {};
  std::vector<uint8_t> out(size_t{1} << 16);
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return {};
  z.next_in = const_cast<uint8_t*>(chunk + at);
  z.avail_in = static_cast<uInt>(size - at);
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (z.total_out == out.size()) {
      if (out.size() >= kMaxProfileBytes) break;
      out.resize(out.size() * 2);
    }
    z.next_out = out.data() + z.total_out;
    z.avail_out = static_cast<uInt>(out.size() - z.total_out);
    rc = inflate(&z, Z_NO_FLUSH);
  }
  const bool done = rc == Z_STREAM_END;
  out.resize(z.total_out);
  inflateEnd(&z);
  return done ? out : std::vector<uint8_t>();
}

}  // namespace

PngMetadata png_metadata(const uint8_t* data, size_t size) {
  PngMetadata meta;
  size_t at = 8;  // after the signature
  while (at <= size && size - at >= 12) {
    const uint32_t length = png_be32(data + at);
    const uint8_t* type = data + at + 4;
    if (length > size - at - 12) break;
    const uint8_t* chunk = data + at + 8;
    if (std::memcmp(type, "IEND", 4) == 0) break;
    if (std::memcmp(type, "eXIf", 4) == 0) meta.orientation = exif_orientation(chunk, length);
    if (std::memcmp(type, "iCCP", 4) == 0) meta.icc = png_iccp_inflate(chunk, length);
    at += size_t{length} + 12;
  }
  return meta;
}

}  // namespace kiln
