// kiln reads the common BMP layouts itself (io/bmp_direct.cpp); stb_image, which reads the rest, is the reference:
// the same pixels for every layout the direct reader takes.
#include <gtest/gtest.h>

#include <stb/stb_image.h>

#include <cstdlib>
#include <random>
#include <vector>

#include "io/web_codecs.h"
#include "kiln/codec.h"

namespace kiln::test {
namespace {

using BmpBytes = std::vector<uint8_t>;

void le_put(BmpBytes* out, size_t at, uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) (*out)[at + i] = static_cast<uint8_t>(value >> (8 * i));
}

// A BMP of random pixels: `bits` 8 (a random 256-colour palette), 24 or 32; `bitfields`: 32-bit BGRA with the
// standard masks in a V4 header (alpha kept) instead of BI_RGB; `top_down`: a negative height.
BmpBytes bmp_make(int32_t width, int32_t height, int bits, bool bitfields, bool top_down, uint32_t seed) {
  const uint32_t dib = bitfields ? 108 : 40;
  const uint32_t palette = bits == 8 ? 256 * 4 : 0;
  const uint32_t offset = 14 + dib + palette;
  const uint32_t stride = (static_cast<uint32_t>(bits) * width + 31) / 32 * 4;
  BmpBytes out(offset + stride * height);
  out[0] = 'B';
  out[1] = 'M';
  le_put(&out, 2, static_cast<uint32_t>(out.size()), 4);
  le_put(&out, 10, offset, 4);
  le_put(&out, 14, dib, 4);
  le_put(&out, 18, static_cast<uint32_t>(width), 4);
  le_put(&out, 22, static_cast<uint32_t>(top_down ? -height : height), 4);
  le_put(&out, 26, 1, 2);
  le_put(&out, 28, static_cast<uint32_t>(bits), 2);
  le_put(&out, 30, bitfields ? 3 : 0, 4);
  if (bitfields) {
    le_put(&out, 54, 0x00FF0000u, 4);
    le_put(&out, 58, 0x0000FF00u, 4);
    le_put(&out, 62, 0x000000FFu, 4);
    le_put(&out, 66, 0xFF000000u, 4);
  }
  std::mt19937 rng(seed);
  for (size_t i = 14 + dib; i < out.size(); ++i) out[i] = static_cast<uint8_t>(rng());
  if (bits == 8) {
    for (uint32_t i = 0; i < 256; ++i) out[14 + dib + i * 4 + 3] = 0;  // the palette's reserved byte
  }
  return out;
}

TEST(CodecBmp, CommonLayoutsGiveStbImagesPixels) {
  struct Layout {
    int bits;
    bool bitfields;
    bool top_down;
  };
  for (const Layout layout : {Layout{24, false, false}, Layout{24, false, true}, Layout{32, false, false},
                              Layout{32, true, false}, Layout{8, false, false}, Layout{8, false, true}}) {
    // Up to 64 pixels a row, then past the SIMD steps' 64 and 32 (bmp_direct: every row padded to 4 bytes).
    for (const int32_t width : {1, 2, 3, 5, 37, 64, 65, 97, 130, 199}) {
      const BmpBytes bmp = bmp_make(width, 7, layout.bits, layout.bitfields, layout.top_down, 17u + width);
      const int channels = layout.bitfields ? 4 : 3;
      Result<ImageBuffer> mine = image_decode(bmp.data(), bmp.size());
      ASSERT_TRUE(mine.is_ok()) << mine.status().message() << ": " << layout.bits << " bits, width " << width;
      int w = 0;
      int h = 0;
      int c = 0;
      stbi_uc* reference = stbi_load_from_memory(bmp.data(), static_cast<int>(bmp.size()), &w, &h, &c, channels);
      ASSERT_NE(reference, nullptr) << stbi_failure_reason();
      const std::vector<uint8_t> want(reference, reference + static_cast<size_t>(w) * h * channels);
      stbi_image_free(reference);
      EXPECT_EQ(mine->channels, channels);
      EXPECT_TRUE(mine->pixels == want) << layout.bits << " bits, bitfields " << layout.bitfields << ", top-down "
                                        << layout.top_down << ", width " << width;
    }
  }
}

TEST(CodecBmp, AFileWithoutItsWholePixelArrayIsRefused) {
  const BmpBytes bmp = bmp_make(37, 7, 24, false, false, 3);
  Result<ImageBuffer> image = image_decode(bmp.data(), bmp.size() - 1);
  ASSERT_FALSE(image.is_ok());
  EXPECT_NE(image.status().message().find("truncated"), std::string::npos) << image.status().message();
}

// Found by fuzz_image_bmp (fuzz/corpus/image_bmp/crash-bmp-row-bytes-overflow.bmp): a header whose bits per pixel
// and row count overflowed the byte count its pixels need (undefined behaviour before the check).
TEST(CodecBmp, AHeaderClaimingMoreBytesThanAnyFileIsRefused) {
  const BmpBytes bmp = {
      0x42, 0x00, 0x02, 0x00, 0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x20, 0xff,
      0xff, 0xff, 0x01, 0x00, 0x20, 0x00, 0x00, 0x01, 0x00, 0x20, 0x00, 0x00,
      0x00, 0x60, 0x00, 0x00, 0x21, 0xb5, 0x00, 0x00, 0x00, 0x00, 0x8b, 0xdd,
      0x8b, 0x8b, 0x99, 0xf9, 0x00, 0x00, 0x02, 0x00, 0x00, 0x46, 0x00, 0x00,
      0x00, 0xff, 0x01, 0x00, 0x20, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x21,
      0xb5, 0x30, 0x00, 0x09, 0x8b, 0x00, 0x11, 0x8b, 0x8b, 0x4d,
  };
  Result<DecodedImage> image = bmp_decode(bmp.data(), bmp.size(), 100'000'000);  // as the harness calls it
  ASSERT_FALSE(image.is_ok());
  EXPECT_EQ(image.status().code(), Errc::kUnsupportedFormat) << image.status().message();
  EXPECT_NE(image.status().message().find("bmp: truncated"), std::string::npos) << image.status().message();
}

}  // namespace
}  // namespace kiln::test
