// Resize on the CPU against cv::resize (each interpolation, u8/f32, 1/3/4 channels, up/down/odd sizes), crop
// (ROI same size = exact copy, ROI resized = cv::resize of the ROI), letterbox (placement, padding), CHW, and
// threaded vs unthreaded.
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/resize.h"
#include "ops/resize.h"

namespace kiln {
namespace {

// Max abs difference allowed vs OpenCV, with why:
//  nearest: 0 (same source index: floor(dx * src/dst), computed in double like OpenCV).
//  u8 bilinear/area/bicubic: 1 (OpenCV uses 11-bit fixed-point weights for u8, kiln float weights, both rounded
//    to nearest at the end).
//  f32: 5e-4 on values in [0, 255] (measured <= 1e-4: same weights, but kiln sums columns first and OpenCV rows
//    first, in SIMD).
double tolerance(Interp interp, PixelType type) {
  if (interp == Interp::kNearest) return 0.0;
  return type == PixelType::kU8 ? 1.0 : 5e-4;
}

Status run_cpu(const ResizeParams& params, const VarShapeBatch& in, const VarShapeBatch& out, ThreadPool* pool = nullptr) {
  return resize(params, in.view(), out.view(), test::cpu_exec(pool));
}

struct SizeCase {
  int32_t in_w, in_h, out_w, out_h;
};

const SizeCase kSizes[] = {
    {37, 29, 64, 48},    // upscale, odd
    {97, 61, 31, 23},    // downscale, non-integer
    {64, 48, 32, 24},    // 2x down (OpenCV's area fast path)
    {90, 60, 30, 20},    // 3x down
    {100, 80, 30, 120},  // down in x, up in y
    {13, 7, 50, 41},     // big upscale
    {33, 33, 33, 33},    // same size: copy
    {200, 150, 61, 47},  // strong downscale
    {1, 1, 5, 3},        // one pixel
};

class ResizeVsOpenCv : public ::testing::TestWithParam<Interp> {};

TEST_P(ResizeVsOpenCv, MatchesCvResize) {
  const Interp interp = GetParam();
  uint32_t seed = 1;
  for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
    for (int32_t channels : {1, 3, 4}) {
      for (const SizeCase& s : kSizes) {
        SCOPED_TRACE(std::string(interp_name(interp)) + " " + pixel_type_name(type) + " c" + std::to_string(channels) +
                     " " + std::to_string(s.in_w) + "x" + std::to_string(s.in_h) + "->" + std::to_string(s.out_w) +
                     "x" + std::to_string(s.out_h));
        auto in = test::random_batch({{s.in_w, s.in_h, channels, type}}, seed++);
        auto out = test::filled_batch({{s.out_w, s.out_h, channels, type}});
        ResizeParams params;
        params.interp = interp;
        ASSERT_TRUE(run_cpu(params, in, out).is_ok());
        cv::Mat expected;
        cv::resize(test::cv_view(in[0]), expected, cv::Size(s.out_w, s.out_h), 0, 0, test::cv_interp(interp));
        const auto diff = test::image_diff(out[0], test::kiln_view(expected), tolerance(interp, type));
        EXPECT_EQ(diff.over, 0) << "max " << diff.max_abs << " first " << diff.first;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Interps, ResizeVsOpenCv,
                         ::testing::Values(Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic),
                         [](const auto& info) { return std::string(interp_name(info.param)); });

TEST(ResizeCrop, SameSizeRoiIsAnExactCopy) {
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
      auto in = test::random_batch({{50, 40, 3, type}, {21, 33, 3, type}}, 7);
      const RectI rois[2] = {{5, 7, 20, 13}, {0, 0, 21, 33}};
      auto out = test::filled_batch({{20, 13, 3, type}, {21, 33, 3, type}});
      ResizeParams params;
      params.interp = interp;
      params.rois = rois;
      ASSERT_TRUE(run_cpu(params, in, out).is_ok());
      for (int i = 0; i < 2; ++i) {
        const ImageView src = in[i].crop(rois[i].x, rois[i].y, rois[i].width, rois[i].height);
        const auto diff = test::image_diff(out[i], src, 0.0);
        EXPECT_EQ(diff.over, 0) << interp_name(interp) << " image " << i << ": " << diff.first;
      }
    }
  }
}

TEST(ResizeCrop, RoiResizedMatchesCvResizeOfTheRoi) {
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    auto in = test::random_batch({{80, 60, 3, PixelType::kU8}}, 11);
    const RectI roi{10, 5, 47, 33};
    auto out = test::filled_batch({{25, 71, 3, PixelType::kU8}});
    ResizeParams params;
    params.interp = interp;
    params.rois = &roi;
    ASSERT_TRUE(run_cpu(params, in, out).is_ok());
    cv::Mat expected;
    cv::resize(test::cv_view(in[0])(cv::Rect(roi.x, roi.y, roi.width, roi.height)), expected, cv::Size(25, 71), 0, 0,
               test::cv_interp(interp));
    const auto diff = test::image_diff(out[0], test::kiln_view(expected), tolerance(interp, PixelType::kU8));
    EXPECT_EQ(diff.over, 0) << interp_name(interp) << ": " << diff.first;
  }
}

TEST(ResizeLetterbox, Placement) {
  auto p = letterbox_placement(1920, 1080, 640, 640);
  EXPECT_EQ(p.width, 640);
  EXPECT_EQ(p.height, 360);
  EXPECT_EQ(p.x, 0);
  EXPECT_EQ(p.y, 140);
  EXPECT_FLOAT_EQ(p.scale, 1.0f / 3.0f);
  p = letterbox_placement(100, 300, 64, 64);
  EXPECT_EQ(p.height, 64);
  EXPECT_EQ(p.width, 21);
  EXPECT_EQ(p.x, 21);
  EXPECT_EQ(p.y, 0);
  p = letterbox_placement(10, 10, 30, 20);  // upscale
  EXPECT_EQ(p.width, 20);
  EXPECT_EQ(p.height, 20);
  EXPECT_EQ(p.x, 5);
  EXPECT_EQ(p.y, 0);
}

TEST(ResizeLetterbox, PadsAndResizesIntoThePlacement) {
  for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
    auto in = test::random_batch({{90, 50, 3, type}}, 5);
    auto out = test::filled_batch({{64, 64, 3, type}});
    ResizeParams params;
    params.fit = ResizeFit::kLetterbox;
    params.pad[0] = 114;
    params.pad[1] = 115;
    params.pad[2] = 116;
    ASSERT_TRUE(run_cpu(params, in, out).is_ok());
    const auto p = letterbox_placement(90, 50, 64, 64);
    cv::Mat inner;
    cv::resize(test::cv_view(in[0]), inner, cv::Size(p.width, p.height), 0, 0, cv::INTER_LINEAR);
    const auto diff =
        test::image_diff(out[0].crop(p.x, p.y, p.width, p.height), test::kiln_view(inner), tolerance(Interp::kBilinear, type));
    EXPECT_EQ(diff.over, 0) << diff.first;
    for (int32_t y = 0; y < 64; ++y) {
      for (int32_t x = 0; x < 64; ++x) {
        if (x >= p.x && x < p.x + p.width && y >= p.y && y < p.y + p.height) continue;
        for (int32_t c = 0; c < 3; ++c) ASSERT_EQ(test::pixel_value(out[0], x, y, c), 114.0f + c) << x << "," << y;
      }
    }
  }
}

TEST(ResizeLayout, ChwMatchesHwc) {
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    auto hwc_in = test::random_batch({{41, 27, 3, PixelType::kF32}}, 3);
    auto chw_in = VarShapeBatch::allocate({{41, 27, 3, PixelType::kF32, Layout::kCHW}});
    for (int32_t y = 0; y < 27; ++y) {
      for (int32_t x = 0; x < 41; ++x) {
        for (int32_t c = 0; c < 3; ++c) chw_in[0].row<float>(y, c)[x] = test::pixel_value(hwc_in[0], x, y, c);
      }
    }
    auto hwc_out = test::filled_batch({{19, 35, 3, PixelType::kF32}});
    auto chw_out = test::filled_batch({{19, 35, 3, PixelType::kF32, Layout::kCHW}});
    ResizeParams params;
    params.interp = interp;
    ASSERT_TRUE(run_cpu(params, hwc_in, hwc_out).is_ok());
    ASSERT_TRUE(run_cpu(params, chw_in, chw_out).is_ok());
    EXPECT_EQ(test::image_diff(hwc_out[0], chw_out[0], 0.0).over, 0) << interp_name(interp);
  }
}

TEST(ResizeThreads, ThreadedMatchesUnthreaded) {
  ThreadPool pool(2);
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
      const std::vector<ImageShape> in_shapes = {{123, 77, 3, type}, {40, 90, 1, type}, {64, 64, 4, type}};
      const std::vector<ImageShape> out_shapes = {{50, 61, 3, type}, {81, 33, 1, type}, {17, 200, 4, type}};
      auto in = test::random_batch(in_shapes, 9);
      auto a = test::filled_batch(out_shapes);
      auto b = test::filled_batch(out_shapes);
      const ResizeParams params{.interp = interp, .fit = ResizeFit::kLetterbox};
      ASSERT_TRUE(run_cpu(params, in, a, nullptr).is_ok());
      ASSERT_TRUE(run_cpu(params, in, b, &pool).is_ok());
      ASSERT_NO_FATAL_FAILURE(test::assert_same_bytes(a, b)) << interp_name(interp);
    }
  }
}

TEST(ResizeNames, NameAndParse) {
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    auto parsed = interp_parse(interp_name(interp));
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(parsed.value(), interp);
  }
  EXPECT_EQ(interp_parse("lanczos").status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
