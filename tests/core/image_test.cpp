// Image views and var-shape batches, and the f16 / u8 conversions every backend shares (src/ops/image_px.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kiln/image.h"
#include "ops/image_px.h"

namespace kiln {
namespace {

TEST(ImageView, PackedViewsHaveTheirStrides) {
  std::vector<float> pixels(3 * 4 * 5);
  const ImageView hwc = image_view_packed(pixels.data(), 5, 4, 3, PixelType::kF32);
  EXPECT_EQ(hwc.row_stride, 5 * 3 * 4);
  EXPECT_EQ(hwc.plane_stride, 0);
  EXPECT_TRUE(hwc.is_packed());
  const ImageView chw = image_view_packed(pixels.data(), 5, 4, 3, PixelType::kF32, Layout::kCHW);
  EXPECT_EQ(chw.row_stride, 5 * 4);
  EXPECT_EQ(chw.plane_stride, 5 * 4 * 4);
  EXPECT_EQ(chw.packed_bytes(), pixels.size() * sizeof(float));
  EXPECT_TRUE(chw.is_packed());
  EXPECT_EQ(chw.row<float>(2, 1), pixels.data() + 20 + 10);
}

TEST(ImageView, CropSharesMemory) {
  std::vector<uint8_t> pixels(10 * 8 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i);
  const ImageView image = image_view_packed(pixels.data(), 10, 8, 3, PixelType::kU8);
  const ImageView crop = image.crop(2, 3, 4, 2);
  EXPECT_EQ(crop.width, 4);
  EXPECT_EQ(crop.height, 2);
  EXPECT_FALSE(crop.is_packed());
  EXPECT_EQ(crop.row<uint8_t>(1)[0], pixels[(4 * 10 + 2) * 3]);
}

TEST(VarShapeBatch, AllocatesAlignedImagesOfDifferentShapes) {
  const VarShapeBatch batch = VarShapeBatch::allocate({{7, 5, 3, PixelType::kU8, Layout::kHWC},
                                                       {2, 9, 1, PixelType::kF32, Layout::kHWC},
                                                       {4, 4, 3, PixelType::kF16, Layout::kCHW}});
  ASSERT_EQ(batch.count(), 3);
  const VarShapeBatchView view = batch.view();
  EXPECT_EQ(view.count, 3);
  EXPECT_EQ(view.space, MemorySpace::kHost);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view[i].data) % 64, 0U) << i;
    EXPECT_TRUE(view[i].is_packed()) << i;
  }
  EXPECT_EQ(view[1].width, 2);
  EXPECT_EQ(view[2].plane_stride, 4 * 4 * 2);
  // The images do not overlap.
  for (int64_t i = 0; i + 1 < 3; ++i) {
    EXPECT_LE(static_cast<uint8_t*>(view[i].data) + view[i].packed_bytes(), static_cast<uint8_t*>(view[i + 1].data));
  }
}

TEST(VarShapeBatch, WrapsCallerMemoryWithoutCopying) {
  std::vector<uint8_t> a(12), b(30);
  VarShapeBatch batch = VarShapeBatch::wrap({image_view_packed(a.data(), 4, 3, 1, PixelType::kU8),
                                             image_view_packed(b.data(), 5, 2, 3, PixelType::kU8)});
  EXPECT_EQ(batch[0].data, a.data());
  EXPECT_EQ(batch[1].data, b.data());
  ImageBatch uniform;
  uniform.resize(3, 4, 2, 1, PixelType::kU8);
  const VarShapeBatch wrapped = VarShapeBatch::wrap(uniform.view());
  ASSERT_EQ(wrapped.count(), 3);
  EXPECT_EQ(wrapped[2].data, static_cast<uint8_t*>(uniform.view().data) + 2 * 8);
  batch.reset();
  EXPECT_EQ(batch.count(), 0);
}

// Every half value converts to float exactly and back to the same bits (NaNs stay NaN).
TEST(HalfConversion, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = kiln_half_to_float(h);
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    if (nan) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE((kiln_float_to_half(f) & 0x7fffu) > 0x7c00u) << h;
      continue;
    }
    EXPECT_EQ(kiln_float_to_half(f), h) << h;
    EXPECT_EQ(static_cast<float>(static_cast<_Float16>(f)), f) << h;
  }
}

// Float -> half rounds to nearest even, like the compiler's _Float16 conversion, across the whole range
// (subnormals, overflow and exact halfway cases included).
TEST(HalfConversion, MatchesTheCompilersRoundingOnRandomFloats) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits_dist;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t bits = bits_dist(rng);
    if (i % 3 == 0) bits = (bits & 0x80000000u) | (0x33000000u + bits % (0x47800000u - 0x33000000u));
    if (i % 7 == 0) bits = (bits & ~0x1fffu) | 0x1000u;  // exactly halfway between two halves
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) continue;
    const _Float16 expected = static_cast<_Float16>(f);
    uint16_t expected_bits;
    std::memcpy(&expected_bits, &expected, 2);
    ASSERT_EQ(kiln_float_to_half(f), expected_bits) << std::hexfloat << f;
  }
}

TEST(U8Conversion, SaturatesAndRounds) {
  EXPECT_EQ(kiln_u8_from_float(-3.0f), 0);
  EXPECT_EQ(kiln_u8_from_float(NAN), 0);
  EXPECT_EQ(kiln_u8_from_float(300.0f), 255);
  EXPECT_EQ(kiln_u8_from_float(2.5f), 3);
  EXPECT_EQ(kiln_u8_from_float(2.49f), 2);
  EXPECT_EQ(kiln_u8_round_even(2.5f), 2);
  EXPECT_EQ(kiln_u8_round_even(3.5f), 4);
  EXPECT_EQ(kiln_u8_round_even(3.51f), 4);
  EXPECT_EQ(kiln_u8_round_even(254.5f), 254);
  EXPECT_EQ(kiln_u8_round_even(255.5f), 255);
}

TEST(PixelAccess, LoadsAndStoresEveryTypeAndLayout) {
  for (PixelType type : {PixelType::kU8, PixelType::kF16, PixelType::kF32}) {
    for (Layout layout : {Layout::kHWC, Layout::kCHW}) {
      VarShapeBatch batch = VarShapeBatch::allocate({{3, 2, 3, type, layout}});
      const ImageView& v = batch[0];
      KilnImageDesc d{};
      d.width = v.width;
      d.height = v.height;
      d.channels = v.channels;
      d.row_stride = static_cast<int32_t>(v.row_stride);
      d.plane_stride = v.plane_stride;
      d.type = static_cast<int32_t>(type);
      d.layout = static_cast<int32_t>(layout);
      auto* base = static_cast<uint8_t*>(v.data);
      for (int32_t y = 0; y < 2; ++y)
        for (int32_t x = 0; x < 3; ++x)
          for (int32_t c = 0; c < 3; ++c) kiln_px_store(base, d, x, y, c, static_cast<float>(y * 100 + x * 10 + c));
      for (int32_t y = 0; y < 2; ++y)
        for (int32_t x = 0; x < 3; ++x)
          for (int32_t c = 0; c < 3; ++c) EXPECT_EQ(kiln_px_load(base, d, x, y, c), y * 100 + x * 10 + c);
      if (layout == Layout::kCHW && type == PixelType::kU8) {
        EXPECT_EQ(base[v.plane_stride + v.row_stride + 2], 100 + 20 + 1);
      }
    }
  }
}

}  // namespace
}  // namespace kiln
