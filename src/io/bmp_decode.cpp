// BMP: the common layouts read directly (bmp_direct.h), everything else through stb_image (Debian's libstb): 1-32
// bits per pixel, bottom-up and top-down, bit fields; called only for data whose magic bytes say BMP, so stb's other
// decoders are never reached from here.
#include <stb/stb_image.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <utility>
#include <string>

#include "io/bmp_direct.h"
#include "io/decode_limits.h"
#include "io/web_codecs.h"

namespace kiln {

namespace {

uint32_t bmp_le(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// stb_image fills the rows a truncated file lacks instead of failing: the uncompressed pixel array must be all there.
Status bmp_complete_check(const uint8_t* data, size_t size) {
  if (size < 30) return unsupported_format("bmp: truncated header");
  const uint32_t offset = bmp_le(data + 10, 4);
  const uint32_t dib = bmp_le(data + 14, 4);
  const bool os2 = dib == 12;
  // Not one ?: expression: its common type would be unsigned, and a top-down BMP's height is negative.
  int64_t width = static_cast<int32_t>(bmp_le(data + 18, 4));
  int64_t height = static_cast<int32_t>(bmp_le(data + 22, 4));
  if (os2) {
    width = bmp_le(data + 18, 2);
    height = bmp_le(data + 20, 2);
  }
  const uint32_t bits = bmp_le(data + (os2 ? 24 : 28), 2);
  const uint32_t compression = os2 || size < 34 ? 0 : bmp_le(data + 30, 4);
  if (compression != 0 && compression != 3 && compression != 6) return Status::ok();  // RLE: stb refuses it
  const int64_t row = (static_cast<int64_t>(bits) * std::llabs(width) + 31) / 32 * 4;  // < 2^48
  const int64_t rows = std::llabs(height);
  if (rows > 0 && row > (INT64_MAX - static_cast<int64_t>(offset)) / rows) {
    return unsupported_format("bmp: truncated (its header claims " + std::to_string(rows) + " rows of " +
                              std::to_string(row) + " bytes)");
  }
  const int64_t needed = static_cast<int64_t>(offset) + row * rows;
  if (static_cast<int64_t>(size) < needed)
    return unsupported_format("bmp: truncated (" + std::to_string(size) + " of " + std::to_string(needed) + " bytes)");
  return Status::ok();
}

}  // namespace

Result<DecodedImage> bmp_decode(const uint8_t* data, size_t size, int64_t max_pixels) {
  if (size > INT32_MAX) return unsupported_format("bmp: file too large");
  int width = 0;
  int height = 0;
  int channels = 0;
  const int length = static_cast<int>(size);
  if (!stbi_info_from_memory(data, length, &width, &height, &channels))
    return unsupported_format(std::string("bmp: ") + stbi_failure_reason());
  height = std::abs(height);  // stb_image's info gives a top-down BMP's height as stored: negative
  KILN_TRY(decode_pixels_check("bmp", width, height, max_pixels));
  KILN_TRY(bmp_complete_check(data, size));
  if (std::optional<DecodedImage> direct = bmp_decode_direct(data, size)) return std::move(*direct);
  // Gray + alpha (2) does not occur in BMP; anything else than 1, 3 or 4 is asked for as RGB.
  const int wanted = channels == 1 || channels == 3 || channels == 4 ? channels : 3;
  stbi_uc* pixels = stbi_load_from_memory(data, length, &width, &height, &channels, wanted);
  if (pixels == nullptr) return unsupported_format(std::string("bmp: ") + stbi_failure_reason());
  DecodedImage image;
  image.width = width;
  image.height = height;
  image.channels = wanted;
  image.pixels.assign(pixels, pixels + static_cast<size_t>(width) * height * wanted);
  stbi_image_free(pixels);
  return image;
}

}  // namespace kiln
