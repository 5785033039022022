// Shared by the PNG and JPEG codec tests: a u8 image owning its pixels (packed, or rows padded), a noise image, the
// views an encoder must refuse, and the check that a decode was refused for its size.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "io/png_codec.h"  // DecodedImage
#include "kiln/codec.h"
#include "kiln/image.h"

namespace kiln::test {

// w x h x c uniform noise (seeded): the slowest content to compress and decode.
inline ImageBuffer random_image(int32_t w, int32_t h, int32_t c, uint32_t seed) {
  ImageBuffer b;
  b.width = w;
  b.height = h;
  b.channels = c;
  b.pixels.resize(static_cast<size_t>(w) * h * c);
  std::mt19937 rng(seed);
  for (auto& v : b.pixels) v = static_cast<uint8_t>(rng());
  return b;
}

struct TestImage {
  std::vector<uint8_t> storage;
  ImageView view;
};

// Every byte `fill`; rows are width * channels + padding bytes apart.
inline TestImage test_image(int32_t width, int32_t height, int32_t channels, int64_t padding, uint8_t fill) {
  TestImage t;
  const int64_t stride = static_cast<int64_t>(width) * channels + padding;
  t.storage.assign(static_cast<size_t>(stride * height), fill);
  t.view = image_view_packed(t.storage.data(), width, height, channels, PixelType::kU8);
  t.view.row_stride = stride;
  return t;
}

// The memory of an 8x8 gray image read as 2x8 float32 (UnsupportedFormat) and as 4x8 with 2 channels
// (InvalidArgument).
inline ImageView as_float32(const ImageView& gray) {
  ImageView f32 = gray;
  f32.type = PixelType::kF32;
  f32.width = 2;
  return f32;
}
inline ImageView as_two_channels(const ImageView& gray) {
  ImageView two = gray;
  two.channels = 2;
  two.width = 4;
  return two;
}

// A decode refused because the image has more pixels than allowed.
inline void expect_too_large(const Result<DecodedImage>& decoded) {
  ASSERT_FALSE(decoded.is_ok());
  EXPECT_NE(decoded.status().message().find("exceeds"), std::string::npos) << decoded.status().to_string();
}

}  // namespace kiln::test
