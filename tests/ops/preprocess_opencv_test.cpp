// Fused preprocess on the CPU against the equivalent OpenCV chain (cv::resize + cv::cvtColor + convertTo +
// subtract/divide + split), f16 output against f32 output converted to half, layouts, letterbox, threads.
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/preprocess.h"
#include "ops/image_px.h"

namespace kiln {
namespace {

Status run_cpu(const PreprocessParams& params, const VarShapeBatch& in, const VarShapeBatch& out,
               ThreadPool* pool = nullptr) {
  return preprocess(params, in.view(), out.view(), test::cpu_exec(pool));
}

// The OpenCV chain: u8 resize, optional BGR<->RGB, to float * scale, - mean, / std, split into planes (CHW).
std::vector<cv::Mat> opencv_chain(const cv::Mat& src, cv::Size size, const PreprocessParams& p) {
  cv::Mat resized;
  cv::resize(src, resized, size, 0, 0, test::cv_interp(p.interp));
  if (p.swap_rb) cv::cvtColor(resized, resized, src.channels() == 4 ? cv::COLOR_BGRA2RGBA : cv::COLOR_BGR2RGB);
  cv::Mat f;
  resized.convertTo(f, CV_32F, p.scale);
  f -= cv::Scalar(p.mean[0], p.mean[1], p.mean[2], p.mean[3]);
  f /= cv::Scalar(p.std[0], p.std[1], p.std[2], p.std[3]);
  std::vector<cv::Mat> planes;
  cv::split(f, planes);
  return planes;
}

// Tolerance vs the OpenCV chain, in output units: OpenCV rounds the resized image to u8 (up to 0.5 level) and its
// u8 resize uses fixed-point weights (up to 1 more level after rounding); kiln keeps the float value. So at most
// 1.5 levels * scale / std (plus float noise); nearest picks the same pixels and differs only by float rounding.
double tolerance(const PreprocessParams& p, int32_t c) {
  if (p.interp == Interp::kNearest) return 1e-5;
  return 1.5 * p.scale / p.std[c] + 1e-5;
}

TEST(PreprocessVsOpenCv, MatchesTheOpenCvChain) {
  uint32_t seed = 100;
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    for (bool swap : {false, true}) {
      for (int32_t channels : {1, 3, 4}) {
        if (swap && channels == 1) continue;
        for (Layout layout : {Layout::kCHW, Layout::kHWC}) {
          const std::vector<ImageShape> in_shapes = {{97, 61, channels, PixelType::kU8},
                                                     {40, 30, channels, PixelType::kU8}};
          const std::vector<ImageShape> out_shapes = {{64, 48, channels, PixelType::kF32, layout},
                                                      {51, 77, channels, PixelType::kF32, layout}};
          auto in = test::random_batch(in_shapes, seed++);
          auto out = test::filled_batch(out_shapes);
          PreprocessParams params;
          params.interp = interp;
          params.swap_rb = swap;
          params.mean[3] = 0.5f;
          params.std[3] = 0.25f;
          ASSERT_TRUE(run_cpu(params, in, out).is_ok());
          for (int i = 0; i < 2; ++i) {
            const auto planes =
                opencv_chain(test::cv_view(in[i]), cv::Size(out[i].width, out[i].height), params);
            for (int32_t c = 0; c < channels; ++c) {
              double worst = 0;
              for (int32_t y = 0; y < out[i].height; ++y) {
                for (int32_t x = 0; x < out[i].width; ++x) {
                  worst = std::max(worst, std::abs(static_cast<double>(test::pixel_value(out[i], x, y, c)) -
                                                   planes[static_cast<size_t>(c)].at<float>(y, x)));
                }
              }
              EXPECT_LE(worst, tolerance(params, c))
                  << interp_name(interp) << " swap " << swap << " c" << channels << " layout "
                  << layout_name(layout) << " image " << i << " channel " << c;
            }
          }
        }
      }
    }
  }
}

TEST(PreprocessF16, EqualsF32ConvertedToHalf) {
  for (Layout layout : {Layout::kCHW, Layout::kHWC}) {
    for (ResizeFit fit : {ResizeFit::kStretch, ResizeFit::kLetterbox}) {
      auto in = test::random_batch({{123, 45, 3, PixelType::kU8}, {31, 67, 3, PixelType::kU8}}, 77);
      auto f32 = test::filled_batch({{64, 64, 3, PixelType::kF32, layout}, {33, 20, 3, PixelType::kF32, layout}});
      auto f16 = test::filled_batch({{64, 64, 3, PixelType::kF16, layout}, {33, 20, 3, PixelType::kF16, layout}});
      PreprocessParams params;
      params.swap_rb = true;
      params.fit = fit;
      params.pad[0] = 114;
      params.pad[1] = 114;
      params.pad[2] = 114;
      ASSERT_TRUE(run_cpu(params, in, f32).is_ok());
      ASSERT_TRUE(run_cpu(params, in, f16).is_ok());
      for (int i = 0; i < 2; ++i) {
        for (int32_t y = 0; y < f32[i].height; ++y) {
          for (int32_t x = 0; x < f32[i].width; ++x) {
            for (int32_t c = 0; c < 3; ++c) {
              const float expected = kiln_half_to_float(kiln_float_to_half(test::pixel_value(f32[i], x, y, c)));
              ASSERT_EQ(test::pixel_value(f16[i], x, y, c), expected) << x << "," << y << "," << c;
            }
          }
        }
      }
    }
  }
}

TEST(PreprocessLetterbox, PadIsNormalizedAndInnerMatchesResize) {
  auto in = test::random_batch({{200, 100, 3, PixelType::kU8}}, 3);
  auto out = test::filled_batch({{64, 64, 3, PixelType::kF32, Layout::kCHW}});
  PreprocessParams params;
  params.fit = ResizeFit::kLetterbox;
  params.swap_rb = true;
  params.pad[0] = 10;
  params.pad[1] = 20;
  params.pad[2] = 30;
  ASSERT_TRUE(run_cpu(params, in, out).is_ok());
  const auto p = letterbox_placement(200, 100, 64, 64);
  EXPECT_EQ(p.height, 32);
  EXPECT_EQ(p.y, 16);
  const auto planes = opencv_chain(test::cv_view(in[0]), cv::Size(p.width, p.height), params);
  for (int32_t y = 0; y < 64; ++y) {
    for (int32_t x = 0; x < 64; ++x) {
      for (int32_t c = 0; c < 3; ++c) {
        const float v = test::pixel_value(out[0], x, y, c);
        if (y >= p.y && y < p.y + p.height) {
          ASSERT_NEAR(v, planes[static_cast<size_t>(c)].at<float>(y - p.y, x - p.x), tolerance(params, c));
        } else {
          // pad is in input channel order, swapped like a pixel
          const float expected = (params.pad[2 - c] * params.scale - params.mean[c]) / params.std[c];
          ASSERT_EQ(v, expected) << x << "," << y << "," << c;
        }
      }
    }
  }
}

TEST(PreprocessThreads, ThreadedMatchesUnthreaded) {
  ThreadPool pool(2);
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    const std::vector<ImageShape> in_shapes = {{321, 177, 3, PixelType::kU8}, {40, 90, 4, PixelType::kU8}};
    const std::vector<ImageShape> out_shapes = {{128, 96, 3, PixelType::kF32, Layout::kCHW},
                                                {81, 33, 4, PixelType::kF16, Layout::kHWC}};
    auto in = test::random_batch(in_shapes, 9);
    auto a = test::filled_batch(out_shapes);
    auto b = test::filled_batch(out_shapes);
    const PreprocessParams params{.interp = interp, .fit = ResizeFit::kLetterbox, .swap_rb = true};
    ASSERT_TRUE(run_cpu(params, in, a, nullptr).is_ok());
    ASSERT_TRUE(run_cpu(params, in, b, &pool).is_ok());
    ASSERT_NO_FATAL_FAILURE(test::assert_same_bytes(a, b)) << interp_name(interp);
  }
}

}  // namespace
}  // namespace kiln
