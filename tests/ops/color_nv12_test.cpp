// NV12 -> RGB on the CPU (the reference NVDEC's device frames are converted by): the matrix and range in double
// precision within rounding, OpenCV's YUV2RGB_NV12 (BT.601, limited range, coefficients rounded to three places),
// a chroma plane that starts after padding rows, and the refused geometries.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "common/image_ops_util.h"
#include "io/codec_test_util.h"
#include "kiln/codec.h"
#include "kiln/image_ops.h"
#include "kiln/ops/color.h"

namespace kiln {
namespace {

// An NV12 frame as one u8 view: `height` luma rows, then `padding` rows nobody reads, then the chroma rows.
struct Nv12Frame {
  int32_t width, height, padding;
  std::vector<uint8_t> bytes;
  ImageView view() {
    const int32_t rows = height + padding + (height + 1) / 2;
    return image_view_packed(bytes.data(), width, rows, 1, PixelType::kU8, Layout::kHWC);
  }
  uint8_t luma(int32_t x, int32_t y) const { return bytes[static_cast<size_t>(y) * width + x]; }
  uint8_t chroma(int32_t x, int32_t y, int32_t c) const {
    return bytes[static_cast<size_t>(height + padding + y / 2) * width + (x - x % 2) + c];
  }
};

Nv12Frame random_nv12(int32_t width, int32_t height, int32_t padding, uint32_t seed) {
  Nv12Frame f{width, height, padding, {}};
  f.bytes.resize(static_cast<size_t>(width) * (height + padding + (height + 1) / 2));
  std::mt19937 rng(seed);
  for (uint8_t& b : f.bytes) b = static_cast<uint8_t>(rng());
  return f;
}

Status convert_views(const ColorParams& params, const ImageView& in, const ImageView& out) {
  return color_convert(params, VarShapeBatchView{&in, 1}, VarShapeBatchView{&out, 1}, test::cpu_exec());
}

Result<ImageBuffer> convert(Nv12Frame& frame, const ColorParams& params) {
  ImageBuffer out = test::random_image(frame.width, frame.height, 3, 1);  // every byte overwritten
  KILN_TRY(convert_views(params, frame.view(), out.view()));
  return out;
}

ColorParams nv12_params(YuvMatrix matrix, bool full_range, int32_t chroma_row = 0) {
  ColorParams p;
  p.conversion = ColorConversion::kNv12ToRgb;
  p.yuv_matrix = matrix;
  p.yuv_full_range = full_range;
  p.nv12_chroma_row = chroma_row;
  return p;
}

TEST(ColorNv12, EachMatrixAndRangeIsItsFormulaWithinRounding) {
  const struct {
    YuvMatrix matrix;
    double kr, kb;
  } matrices[] = {{YuvMatrix::kBt601, 0.299, 0.114}, {YuvMatrix::kBt709, 0.2126, 0.0722},
                  {YuvMatrix::kBt2020, 0.2627, 0.0593}};
  for (const auto& m : matrices) {
    for (bool full : {false, true}) {
      SCOPED_TRACE(std::string(enum_name(kYuvMatrixNames, m.matrix)) + (full ? " full" : " limited"));
      Nv12Frame frame = random_nv12(64, 47, 0, 3);
      auto out = convert(frame, nv12_params(m.matrix, full));
      ASSERT_TRUE(out.is_ok()) << out.status().to_string();
      const double kg = 1 - m.kr - m.kb, ys = full ? 1 : 255.0 / 219, cs = full ? 1 : 255.0 / 224;
      int worst = 0;
      for (int32_t y = 0; y < frame.height; ++y) {
        for (int32_t x = 0; x < frame.width; ++x) {
          const double luma = std::max(0.0, frame.luma(x, y) - (full ? 0.0 : 16.0)) * ys;
          const double u = (frame.chroma(x, y, 0) - 128.0) * cs, v = (frame.chroma(x, y, 1) - 128.0) * cs;
          const double rgb[3] = {luma + 2 * (1 - m.kr) * v, luma - 2 * m.kb * (1 - m.kb) / kg * u - 2 * m.kr * (1 - m.kr) / kg * v,
                                 luma + 2 * (1 - m.kb) * u};
          for (int c = 0; c < 3; ++c) {
            const int want = static_cast<int>(std::clamp(std::lround(rgb[c]), 0L, 255L));
            worst = std::max(worst, std::abs(want - static_cast<int>(out.value().view().row<uint8_t>(y)[x * 3 + c])));
          }
        }
      }
      EXPECT_LE(worst, 1);
    }
  }
}

TEST(ColorNv12, Bt601LimitedIsOpenCvsYuv2RgbNv12WithinItsRoundedCoefficients) {
  Nv12Frame frame = random_nv12(128, 96, 0, 5);
  // Real pictures keep to the legal range; OpenCV's coefficients (1.164, 1.596, ...) drift from the exact ones at
  // its ends.
  for (size_t i = 0; i < frame.bytes.size(); ++i) {
    frame.bytes[i] = static_cast<uint8_t>(16 + frame.bytes[i] % (i < 128u * 96 ? 220 : 225));
  }
  auto out = convert(frame, nv12_params(YuvMatrix::kBt601, false));
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  cv::Mat nv12(frame.height * 3 / 2, frame.width, CV_8UC1, frame.bytes.data());
  cv::Mat rgb;
  cv::cvtColor(nv12, rgb, cv::COLOR_YUV2RGB_NV12);
  cv::Mat diff;
  cv::absdiff(rgb, test::cv_view(out.value().view()), diff);
  double worst = 0;
  cv::minMaxLoc(diff.reshape(1), nullptr, &worst);
  EXPECT_LE(worst, 2.0);
  EXPECT_LT(cv::mean(diff.reshape(1))[0], 0.5);
}

TEST(ColorNv12, AChromaPlaneAfterPaddingRowsGivesTheSamePixels) {
  // NVDEC's surfaces are taller than the picture (1088 rows for 1080): the chroma plane starts at the surface's row.
  Nv12Frame packed = random_nv12(32, 18, 0, 9);
  Nv12Frame padded = packed;
  padded.padding = 6;
  padded.bytes.assign(static_cast<size_t>(32) * (18 + 6 + 9), 0xEE);
  std::memcpy(padded.bytes.data(), packed.bytes.data(), 32u * 18);
  std::memcpy(padded.bytes.data() + 32u * 24, packed.bytes.data() + 32u * 18, 32u * 9);
  auto a = convert(packed, nv12_params(YuvMatrix::kBt709, false));
  auto b = convert(padded, nv12_params(YuvMatrix::kBt709, false, 24));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(std::memcmp(a.value().pixels.data(), b.value().pixels.data(), a.value().pixels.size()), 0);
  auto wrong = convert(padded, nv12_params(YuvMatrix::kBt709, false));  // chroma read from the padding rows
  ASSERT_TRUE(wrong.is_ok());
  EXPECT_NE(std::memcmp(a.value().pixels.data(), wrong.value().pixels.data(), a.value().pixels.size()), 0);
}

TEST(ColorNv12, RefusesGeometriesThatAreNotNv12) {
  const auto refused = [](int32_t in_w, int32_t in_h, int32_t in_c, int32_t out_w, int32_t out_h, int32_t chroma_row,
                          const char* why) {
    const ImageBuffer in = test::random_image(in_w, in_h, in_c, 2);
    const ImageBuffer out = test::random_image(out_w, out_h, 3, 3);
    const Status st = convert_views(nv12_params(YuvMatrix::kBt709, false, chroma_row), in.view(), out.view());
    EXPECT_EQ(st.code(), Errc::kInvalidArgument) << why;
    EXPECT_NE(st.message().find(why), std::string::npos) << st.message();
  };
  refused(31, 24, 1, 31, 16, 0, "even width");
  refused(32, 24, 1, 30, 16, 0, "even width");
  refused(32, 24, 3, 32, 16, 0, "1-channel");
  refused(32, 23, 1, 32, 16, 0, "end before its chroma plane");
  refused(32, 40, 1, 32, 16, 10, "must start after the 16 luma rows");
}

}  // namespace
}  // namespace kiln
