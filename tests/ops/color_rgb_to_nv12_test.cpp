// RGB -> NV12 on the CPU (the reference NVENC's device frames of composites are made by): each matrix and range in
// double precision within rounding, gray levels with neutral chroma and the encoder's black and white, a round trip
// through NV12 -> RGB, a chroma plane after padding rows, odd heights, and the refused geometries.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/image_ops_util.h"
#include "io/codec_test_util.h"
#include "kiln/codec.h"
#include "kiln/image_ops.h"
#include "kiln/ops/color.h"

namespace kiln {
namespace {

ColorParams to_nv12_params(YuvMatrix matrix, bool full_range, int32_t chroma_row = 0) {
  ColorParams p;
  p.conversion = ColorConversion::kRgbToNv12;
  p.yuv_matrix = matrix;
  p.yuv_full_range = full_range;
  p.nv12_chroma_row = chroma_row;
  return p;
}

// The NV12 bytes of `rgb` (chroma right after the luma unless chroma_row says otherwise); 0xEE where not written.
Result<std::vector<uint8_t>> to_nv12(const ImageBuffer& rgb, const ColorParams& params) {
  const int32_t chroma_row = params.nv12_chroma_row > 0 ? params.nv12_chroma_row : rgb.height;
  const int32_t rows = chroma_row + (rgb.height + 1) / 2;
  std::vector<uint8_t> bytes(static_cast<size_t>(rgb.width) * rows, 0xEE);
  const ImageView in = rgb.view();
  const ImageView out = image_view_packed(bytes.data(), rgb.width, rows, 1, PixelType::kU8);
  KILN_TRY(color_convert(params, VarShapeBatchView{&in, 1}, VarShapeBatchView{&out, 1}, test::cpu_exec()));
  return bytes;
}

void kr_kb(YuvMatrix m, double* kr, double* kb) {
  *kr = m == YuvMatrix::kBt601 ? 0.299 : m == YuvMatrix::kBt709 ? 0.2126 : 0.2627;
  *kb = m == YuvMatrix::kBt601 ? 0.114 : m == YuvMatrix::kBt709 ? 0.0722 : 0.0593;
}

TEST(ColorRgbToNv12, EachMatrixAndRangeIsItsFormulaWithinRounding) {
  constexpr int32_t kWidth = 64, kHeight = 47;  // an odd height: the last chroma row takes its one row twice
  const ImageBuffer rgb = test::random_image(kWidth, kHeight, 3, 4);
  for (YuvMatrix matrix : {YuvMatrix::kBt601, YuvMatrix::kBt709, YuvMatrix::kBt2020}) {
    for (bool full : {false, true}) {
      SCOPED_TRACE(testing::Message() << enum_name(kYuvMatrixNames, matrix) << (full ? " full" : " limited"));
      auto nv12 = to_nv12(rgb, to_nv12_params(matrix, full));
      ASSERT_TRUE(nv12.is_ok()) << nv12.status().to_string();
      double kr, kb;
      kr_kb(matrix, &kr, &kb);
      const double kg = 1 - kr - kb, ys = full ? 1 : 219.0 / 255, cs = full ? 1 : 224.0 / 255, off = full ? 0 : 16;
      const auto px = [&](int32_t x, int32_t y, int c) {
        return static_cast<double>(rgb.pixels[(static_cast<size_t>(y) * kWidth + x) * 3 + c]);
      };
      double worst = 0;
      for (int32_t y = 0; y < kHeight; ++y) {
        for (int32_t x = 0; x < kWidth; ++x) {
          const double want = off + ys * (kr * px(x, y, 0) + kg * px(x, y, 1) + kb * px(x, y, 2));
          worst = std::max(worst, std::abs(nv12.value()[static_cast<size_t>(y) * kWidth + x] - want));
        }
      }
      for (int32_t by = 0; by < (kHeight + 1) / 2; ++by) {
        for (int32_t bx = 0; bx < kWidth / 2; ++bx) {
          double r = 0, g = 0, b = 0;
          for (int32_t dy = 0; dy < 2; ++dy) {
            const int32_t yy = std::min(2 * by + dy, kHeight - 1);
            for (int32_t dx = 0; dx < 2; ++dx) {
              r += px(2 * bx + dx, yy, 0) / 4;
              g += px(2 * bx + dx, yy, 1) / 4;
              b += px(2 * bx + dx, yy, 2) / 4;
            }
          }
          const double luma = kr * r + kg * g + kb * b;
          const double u = 128 + cs * (b - luma) / (2 * (1 - kb)), v = 128 + cs * (r - luma) / (2 * (1 - kr));
          const uint8_t* chroma = nv12.value().data() + static_cast<size_t>(kHeight + by) * kWidth + 2 * bx;
          worst = std::max({worst, std::abs(chroma[0] - u), std::abs(chroma[1] - v)});
        }
      }
      EXPECT_LE(worst, 0.5 + 1e-3) << "within rounding of the exact formula";
    }
  }
}

TEST(ColorRgbToNv12, GrayKeepsNeutralChromaAndTheEncodersBlackAndWhite) {
  ImageBuffer gray;
  gray.width = 256;
  gray.height = 2;
  gray.channels = 3;
  gray.pixels.resize(256 * 2 * 3);
  for (size_t i = 0; i < gray.pixels.size(); ++i) gray.pixels[i] = static_cast<uint8_t>((i / 3) % 256);
  for (bool full : {false, true}) {
    auto nv12 = to_nv12(gray, to_nv12_params(YuvMatrix::kBt709, full));
    ASSERT_TRUE(nv12.is_ok());
    const std::vector<uint8_t>& b = nv12.value();
    EXPECT_EQ(b[0], full ? 0 : 16);
    EXPECT_EQ(b[255], full ? 255 : 235);
    for (int32_t level = 0; level < 256; ++level) {
      EXPECT_NEAR(b[level], full ? level : 16 + level * 219.0 / 255, 0.5) << level;
    }
    for (size_t i = 512; i < b.size(); ++i) EXPECT_EQ(b[i], 128) << "chroma byte " << i - 512;
  }
}

TEST(ColorRgbToNv12, ThroughNv12AndBackASmoothPictureKeepsItsColours) {
  constexpr int32_t kWidth = 96, kHeight = 64;
  ImageBuffer rgb;
  rgb.width = kWidth;
  rgb.height = kHeight;
  rgb.channels = 3;
  rgb.pixels.resize(static_cast<size_t>(kWidth) * kHeight * 3);
  for (int32_t y = 0; y < kHeight; ++y) {
    for (int32_t x = 0; x < kWidth; ++x) {
      uint8_t* p = &rgb.pixels[(static_cast<size_t>(y) * kWidth + x) * 3];
      p[0] = static_cast<uint8_t>(20 + x * 2);
      p[1] = static_cast<uint8_t>(200 - y * 2);
      p[2] = static_cast<uint8_t>(60 + (x + y));
    }
  }
  for (bool full : {false, true}) {
    auto nv12 = to_nv12(rgb, to_nv12_params(YuvMatrix::kBt709, full));
    ASSERT_TRUE(nv12.is_ok());
    ColorParams back = to_nv12_params(YuvMatrix::kBt709, full);
    back.conversion = ColorConversion::kNv12ToRgb;
    ImageBuffer out = test::random_image(kWidth, kHeight, 3, 1);
    const ImageView in = image_view_packed(nv12.value().data(), kWidth, kHeight * 3 / 2, 1, PixelType::kU8);
    const ImageView ov = out.view();
    ASSERT_TRUE(color_convert(back, VarShapeBatchView{&in, 1}, VarShapeBatchView{&ov, 1}, test::cpu_exec()).is_ok());
    double sum = 0;
    int worst = 0;
    for (size_t i = 0; i < out.pixels.size(); ++i) {
      const int d = std::abs(int(out.pixels[i]) - int(rgb.pixels[i]));
      sum += d;
      worst = std::max(worst, d);
    }
    EXPECT_LT(sum / static_cast<double>(out.pixels.size()), 1.5) << (full ? "full" : "limited");
    EXPECT_LE(worst, 6) << (full ? "full" : "limited");
  }
}

TEST(ColorRgbToNv12, AChromaPlaneAfterPaddingRowsHoldsTheSameBytes) {
  const ImageBuffer rgb = test::random_image(32, 18, 3, 8);
  auto packed = to_nv12(rgb, to_nv12_params(YuvMatrix::kBt601, false));
  auto padded = to_nv12(rgb, to_nv12_params(YuvMatrix::kBt601, false, 24));
  ASSERT_TRUE(packed.is_ok() && padded.is_ok());
  EXPECT_EQ(std::memcmp(packed.value().data(), padded.value().data(), 32u * 18), 0);
  EXPECT_EQ(std::memcmp(packed.value().data() + 32u * 18, padded.value().data() + 32u * 24, 32u * 9), 0);
  for (size_t i = 32u * 18; i < 32u * 24; ++i) EXPECT_EQ(padded.value()[i], 0xEE) << "a padding row was written";
}

TEST(ColorRgbToNv12, RefusesGeometriesThatAreNotNv12) {
  const auto refused = [](int32_t in_w, int32_t in_h, int32_t in_c, int32_t out_w, int32_t out_h, int32_t chroma_row,
                          const char* why) {
    const ImageBuffer in = test::random_image(in_w, in_h, in_c, 2);
    const ImageBuffer out = test::random_image(out_w, out_h, 1, 3);
    const ImageView iv = in.view(), ov = out.view();
    const Status st = color_convert(to_nv12_params(YuvMatrix::kBt709, false, chroma_row), VarShapeBatchView{&iv, 1},
                                    VarShapeBatchView{&ov, 1}, test::cpu_exec());
    EXPECT_EQ(st.code(), Errc::kInvalidArgument) << why;
    EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
  };
  refused(31, 16, 3, 31, 24, 0, "even width");
  refused(32, 16, 3, 30, 24, 0, "even width");
  refused(32, 16, 1, 32, 24, 0, "3 input channels");
  refused(32, 16, 3, 32, 23, 0, "end before its chroma plane");
  refused(32, 16, 3, 32, 40, 10, "must start after the 16 luma rows");
}

}  // namespace
}  // namespace kiln
