// kiln's direct PNG reader (io/png_direct) past its chunk CRCs: each input's chunk CRCs are recomputed before it is
// decoded, so the mutations reach the zlib stream, the row filters and the header checks instead of stopping at
// the first CRC (fuzz_image_decode covers the files as they come). Where libspng decodes the same bytes too, the
// pixels must be equal (libspng may refuse a file the direct reader takes: it also checks ancillary chunks).
#include <spng.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "io/crc32.h"
#include "io/png_codec.h"
#include "io/png_direct.h"

namespace {

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// Rewrites the CRC of every complete chunk after the 8-byte signature.
void crcs_fix(std::vector<uint8_t>& png) {
  for (size_t pos = 8; png.size() - pos >= 12;) {
    const uint32_t length = be32(png.data() + pos);
    if (png.size() - pos - 12 < length) return;
    kiln::Crc32 crc;
    crc.update(png.data() + pos + 4, 4 + size_t{length});
    const uint32_t v = crc.value();
    uint8_t* out = png.data() + pos + 8 + length;
    for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
    pos += 12 + size_t{length};
  }
}

// libspng's decode of a file the direct reader took (gray, RGB or RGBA, 8-bit): empty when it refuses it.
std::vector<uint8_t> libspng_decode(const std::vector<uint8_t>& png, int32_t channels) {
  spng_ctx* ctx = spng_ctx_new(0);
  if (ctx == nullptr) return {};
  const int fmt = channels == 1 ? SPNG_FMT_G8 : channels == 3 ? SPNG_FMT_RGB8 : SPNG_FMT_RGBA8;
  std::vector<uint8_t> out;
  size_t n = 0;
  if (spng_set_png_buffer(ctx, png.data(), png.size()) == 0 && spng_decoded_image_size(ctx, fmt, &n) == 0) {
    out.resize(n);
    if (spng_decode_image(ctx, out.data(), n, fmt, 0) != 0) out.clear();
  }
  spng_ctx_free(ctx);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  std::vector<uint8_t> png(data, data + size);
  crcs_fix(png);
  constexpr int64_t kMaxPixels = int64_t{1} << 20;
  const auto direct = kiln::png_decode_direct(png.data(), png.size(), kMaxPixels, kiln::Deadline::never());
  (void)kiln::png_decode(png.data(), png.size(), kMaxPixels);
  if (direct) {
    const std::vector<uint8_t> reference = libspng_decode(png, direct->channels);
    if (!reference.empty() && reference != direct->pixels) std::abort();
  }
  return 0;
}
