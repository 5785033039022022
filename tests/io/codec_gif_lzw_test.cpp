// kiln's LZW decoder (io/gif_lzw.h) against giflib's own (DGifSlurp) on the same files: every code size from 1-bit
// to 8-bit palettes, noise (the table fills and is cleared) and runs (long strings, the code defined by its own
// use), interlaced or not; and damaged data refused.
#include <gif_lib.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "io/gif_lzw.h"
#include "kiln/codec.h"

namespace kiln {
namespace {

using Bytes = std::vector<uint8_t>;

int append(GifFileType* gif, const GifByteType* data, int length) {
  static_cast<Bytes*>(gif->UserData)->insert(static_cast<Bytes*>(gif->UserData)->end(), data, data + length);
  return length;
}

// A GIF of `indices` (rows in order) with a palette of 2^bits colours, written by giflib.
Bytes gif_of_indices(const std::vector<uint8_t>& indices, int32_t width, int32_t height, int bits, bool interlaced) {
  Bytes out;
  int err = 0;
  GifFileType* gif = EGifOpen(&out, append, &err);
  ColorMapObject* palette = GifMakeMapObject(1 << bits, nullptr);
  for (int i = 0; i < (1 << bits); ++i) palette->Colors[i] = {uint8_t(i * 7), uint8_t(255 - i), uint8_t(i * 3 + 1)};
  EXPECT_EQ(EGifPutScreenDesc(gif, width, height, bits, 0, palette), GIF_OK);
  EXPECT_EQ(EGifPutImageDesc(gif, 0, 0, width, height, interlaced, nullptr), GIF_OK);
  std::vector<int32_t> rows;
  for (auto [start, step] : interlaced ? std::vector<std::pair<int, int>>{{0, 8}, {4, 8}, {2, 4}, {1, 2}}
                                       : std::vector<std::pair<int, int>>{{0, 1}}) {
    for (int32_t y = start; y < height; y += step) rows.push_back(y);
  }
  for (const int32_t y : rows) {
    std::vector<GifPixelType> line(indices.begin() + y * width, indices.begin() + (y + 1) * width);
    EXPECT_EQ(EGifPutLine(gif, line.data(), width), GIF_OK);
  }
  EXPECT_EQ(EGifCloseFile(gif, &err), GIF_OK);
  GifFreeMapObject(palette);
  return out;
}

struct Reader {
  const Bytes* bytes;
  size_t at = 0;
};

int read_from(GifFileType* gif, GifByteType* out, int length) {
  auto* r = static_cast<Reader*>(gif->UserData);
  const size_t n = std::min(static_cast<size_t>(length), r->bytes->size() - r->at);
  std::copy_n(r->bytes->data() + r->at, n, out);
  r->at += n;
  return static_cast<int>(n);
}

// giflib's own decode of the first image, as RGB.
std::vector<uint8_t> giflib_rgb(const Bytes& file) {
  Reader reader{&file};
  int err = 0;
  GifFileType* gif = DGifOpen(&reader, read_from, &err);
  EXPECT_NE(gif, nullptr);
  EXPECT_EQ(DGifSlurp(gif), GIF_OK);
  const SavedImage& image = gif->SavedImages[0];
  std::vector<uint8_t> rgb;
  const int32_t w = image.ImageDesc.Width;
  const int32_t h = image.ImageDesc.Height;
  for (int32_t i = 0; i < w * h; ++i) {  // DGifSlurp puts an interlaced image's rows in place itself
    const GifColorType c = gif->SColorMap->Colors[image.RasterBits[i]];
    rgb.insert(rgb.end(), {c.Red, c.Green, c.Blue});
  }
  DGifCloseFile(gif, &err);
  return rgb;
}

std::vector<uint8_t> indices_of(int32_t width, int32_t height, int bits, bool noise, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<uint8_t> indices(static_cast<size_t>(width) * height);
  const int colours = 1 << bits;
  for (size_t i = 0; i < indices.size(); ++i) {
    indices[i] = noise ? static_cast<uint8_t>(random() % colours)
                       : static_cast<uint8_t>((i / 97 + (i % static_cast<size_t>(width)) / 13) % colours);
  }
  return indices;
}

TEST(GifLzw, GivesGiflibsPixelsForEveryCodeSizeAndContent) {
  for (int bits = 1; bits <= 8; ++bits) {
    for (const bool noise : {true, false}) {
      for (const bool interlaced : {false, true}) {
        const int32_t width = 61 + bits * 17;
        const int32_t height = 43 + bits * 9;
        const Bytes file =
            gif_of_indices(indices_of(width, height, bits, noise, 58u + bits), width, height, bits, interlaced);
        DecodeOptions options;
        options.channels = 3;
        auto decoded = image_decode(file.data(), file.size(), options);
        ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
        EXPECT_EQ(decoded.value().pixels, giflib_rgb(file))
            << bits << "-bit palette, " << (noise ? "noise" : "runs") << (interlaced ? ", interlaced" : "");
      }
    }
  }
}

TEST(GifLzw, ALargeNoisyImageFillsTheTableManyTimes) {
  const Bytes file = gif_of_indices(indices_of(900, 700, 8, true, 7), 900, 700, 8, false);
  auto decoded = image_decode(file.data(), file.size(), DecodeOptions{});
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded.value().pixels, giflib_rgb(file));
}

TEST(GifLzw, DamagedDataIsRefusedWithItsReason) {
  uint8_t out[16] = {};
  // Code size 2: clear 4, end 5; 9 bits a code at first... here 3-bit codes: clear, then code 7 (not yet defined).
  const std::vector<uint8_t> undefined = {0x3C};  // bits: 100 (4, clear) 111 (7) ...
  auto status = gif_lzw_decode(undefined, 2, out, sizeof(out), Deadline::never());
  EXPECT_EQ(status.code(), Errc::kUnsupportedFormat);
  EXPECT_NE(status.message().find("before it was defined"), std::string::npos) << status.message();

  const std::vector<uint8_t> short_data = {0x04};  // clear, then literal 0, then the data ends
  status = gif_lzw_decode(short_data, 2, out, sizeof(out), Deadline::never());
  EXPECT_EQ(status.code(), Errc::kUnsupportedFormat);
  EXPECT_NE(status.message().find("ends early"), std::string::npos) << status.message();

  EXPECT_EQ(gif_lzw_decode(short_data, 12, out, sizeof(out), Deadline::never()).code(), Errc::kUnsupportedFormat);
}

}  // namespace
}  // namespace kiln
