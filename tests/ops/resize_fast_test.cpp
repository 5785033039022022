// The fast two-tap u8 path (src/ops/cpu/resize_bilinear_u8.h) of resize and preprocess against the reference mode
// (KILN_CPU_ISA=scalar: the per-pixel float expression) on the same inputs: widths with and without a scalar
// tail, up and down, crops, letterbox, 3 and 4 channels, threads. Tolerances (why not 0: 11-bit horizontal
// weights): u8 output at most 1 level apart, and rarely; preprocess output at most 0.07 levels * scale / std.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/image_ops_util.h"
#include "core/cpu_isa.h"
#include "core/thread_pool.h"
#include "kiln/image_ops.h"
#include "kiln/ops/preprocess.h"
#include "kiln/ops/resize.h"

namespace kiln {
namespace {

class ResizeFastPath : public ::testing::Test {
 protected:
  void SetUp() override {
    m_saved = cpu_isa_active();
    if (cpu_isa_best() != CpuIsa::kAvx2)
      GTEST_SKIP() << "the fast path needs AVX2; this CPU has " << cpu_isa_name(cpu_isa_best());
  }
  void TearDown() override { cpu_isa_set(m_saved); }

  CpuIsa m_saved = CpuIsa::kScalar;
};

struct Size {
  int32_t in_w, in_h, out_w, out_h;
};

const Size kSizes[] = {
    {1920, 1080, 512, 512},  // the benchmark's case
    {640, 480, 112, 112},
    {37, 29, 64, 48},        // upscale, tail only
    {97, 61, 31, 23},        // downscale, odd
    {100, 80, 30, 121},      // down in x, up in y
    {13, 7, 50, 41},         // big upscale: taps on the last source pixel
    {1, 1, 9, 3},            // one pixel
    {300, 200, 299, 201},    // nearly the same size
};

TEST_F(ResizeFastPath, U8ResizeIsWithinOneLevelOfTheReference) {
  uint32_t seed = 77;
  ThreadPool pool(3);
  for (Interp interp : {Interp::kBilinear, Interp::kArea}) {
    for (int32_t channels : {3, 4}) {
      for (ResizeFit fit : {ResizeFit::kStretch, ResizeFit::kLetterbox}) {
        for (const Size& s : kSizes) {
          for (bool crop : {false, true}) {
            const std::string trace = std::string(interp_name(interp)) + " " + std::to_string(channels) + "ch " +
                                      std::to_string(s.in_w) + "x" + std::to_string(s.in_h) + "->" +
                                      std::to_string(s.out_w) + "x" + std::to_string(s.out_h) +
                                      (fit == ResizeFit::kLetterbox ? " letterbox" : "") + (crop ? " crop" : "");
            SCOPED_TRACE(trace);
            auto in = test::random_batch({{s.in_w, s.in_h, channels, PixelType::kU8}}, seed++);
            ResizeParams params;
            params.interp = interp;
            params.fit = fit;
            params.pad[0] = 3.0f;
            params.pad[1] = 128.0f;
            params.pad[2] = 250.0f;
            const RectI roi{s.in_w / 5, s.in_h / 7, s.in_w - s.in_w / 5 - s.in_w / 9, s.in_h - s.in_h / 7};
            if (crop) params.rois = &roi;
            auto expected = test::filled_batch({{s.out_w, s.out_h, channels, PixelType::kU8}});
            auto actual = test::filled_batch({{s.out_w, s.out_h, channels, PixelType::kU8}});
            cpu_isa_set(CpuIsa::kScalar);
            ASSERT_TRUE(resize(params, in.view(), expected.view(), test::cpu_exec()).is_ok());
            cpu_isa_set(CpuIsa::kAvx2);
            ASSERT_TRUE(resize(params, in.view(), actual.view(), test::cpu_exec(&pool)).is_ok());
            const auto diff = test::image_diff(actual[0], expected[0], 1.0);
            EXPECT_EQ(diff.over, 0) << diff.first;
            // Noise is the worst case for the weights' rounding, and still almost every value is the same.
            EXPECT_LT(diff.mean_abs, 0.05) << "max " << diff.max_abs;
          }
        }
      }
    }
  }
}

TEST_F(ResizeFastPath, PreprocessIsWithinTheStatedToleranceOfTheReference) {
  uint32_t seed = 500;
  ThreadPool pool(2);
  for (Layout layout : {Layout::kCHW, Layout::kHWC}) {
    for (PixelType type : {PixelType::kF32, PixelType::kF16}) {
      for (int32_t channels : {3, 4}) {
        for (bool swap : {false, true}) {
          for (const Size& s : kSizes) {
            SCOPED_TRACE(std::string(layout_name(layout)) + " " + pixel_type_name(type) + " " +
                         std::to_string(channels) + "ch swap " + std::to_string(swap) + " " + std::to_string(s.in_w) +
                         "x" + std::to_string(s.in_h) + "->" + std::to_string(s.out_w) + "x" + std::to_string(s.out_h));
            auto in = test::random_batch({{s.in_w, s.in_h, channels, PixelType::kU8}}, seed++);
            PreprocessParams params;
            params.interp = Interp::kBilinear;
            params.fit = (seed % 2) == 0 ? ResizeFit::kLetterbox : ResizeFit::kStretch;
            params.swap_rb = swap;
            params.scale = 1.0f / 255.0f;
            const float mean[4] = {0.485f, 0.456f, 0.406f, 0.5f};
            const float std_dev[4] = {0.229f, 0.224f, 0.225f, 0.25f};
            for (int32_t c = 0; c < 4; ++c) {
              params.mean[c] = mean[c];
              params.std[c] = std_dev[c];
            }
            const ImageShape shape{s.out_w, s.out_h, channels, type, layout};
            auto expected = test::filled_batch({shape});
            auto actual = test::filled_batch({shape});
            cpu_isa_set(CpuIsa::kScalar);
            ASSERT_TRUE(preprocess(params, in.view(), expected.view(), test::cpu_exec()).is_ok());
            cpu_isa_set(CpuIsa::kAvx2);
            ASSERT_TRUE(preprocess(params, in.view(), actual.view(), test::cpu_exec(&pool)).is_ok());
            // 0.07 levels / 255 / 0.224 = 1.2e-3; f16 adds half an ulp of values up to ~2.6 (1e-3).
            const double tolerance = 0.07 / 255.0 / 0.224 + (type == PixelType::kF16 ? 2e-3 : 1e-5);
            const auto diff = test::image_diff(actual[0], expected[0], tolerance);
            EXPECT_EQ(diff.over, 0) << diff.first << " (max " << diff.max_abs << ")";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln
