// PNG encode/decode of 8-bit images (libspng). Available when KILN_HAS_JPEG (libspng + libturbojpeg found).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/deadline.h"
#include "kiln/image.h"
#include "kiln/pixel_bytes.h"
#include "kiln/status.h"

namespace kiln {

// Default decode limit: 64 Mpx, far above any chart and far below what a decompression bomb asks for.
constexpr int64_t kDecodeMaxPixels = int64_t{64} * 1024 * 1024;

// An owning, packed u8 image returned by the decoders (PNG and JPEG).
struct DecodedImage {
  PixelBytes pixels;  // width * height * channels bytes, rows packed
  int32_t width = 0;
  int32_t height = 0;
  int32_t channels = 0;  // 1 gray, 3 RGB, 4 RGBA
  // What the file says about its pixels, applied by image_decode (the decoders themselves leave them as stored):
  int32_t orientation = 1;   // EXIF orientation 1-8 (1: stored upright)
  std::vector<uint8_t> icc;  // the embedded ICC profile, empty: none (sRGB assumed)

  ImageView view() {
    ImageView v;
    v.data = pixels.data();
    v.width = width;
    v.height = height;
    v.channels = channels;
    v.row_stride = static_cast<int64_t>(width) * channels;
    v.type = PixelType::kU8;
    return v;
  }
  void reset() { *this = DecodedImage(); }
};

// Appends one PNG of `image` (u8; 1, 3 or 4 channels: gray, RGB, RGBA; any row_stride) to `out`.
// compression_level is the zlib level 0..9 (1: fast, what chart images need).
Status png_encode(const ImageView& image, std::vector<uint8_t>& out, int32_t compression_level = 1);

// Decodes a PNG to 8 bits per channel: gray (<= 8 bit) -> 1 channel, RGB/indexed -> 3, anything with alpha
// -> 4 (RGBA), 16-bit samples are rounded to the nearest 8-bit level. Images over max_pixels are refused before any
// pixel is decompressed. Corrupt or truncated data and a decode still running at `deadline` give UnsupportedFormat.
Result<DecodedImage> png_decode(const uint8_t* data, size_t size, int64_t max_pixels = kDecodeMaxPixels,
                                const Deadline& deadline = Deadline::never());

}  // namespace kiln
