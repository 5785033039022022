// Fused preprocess on every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU
// reference on random var-shape batches: every interpolation, stretch/letterbox, swap, f32/f16, HWC/CHW,
// 1/3/4 channels. Tolerance 0: same tables, same float expression and order on every backend, correctly
// rounded division, and the same integer f16 rounding (image_px.h). NV12 frames: the fused kernels against the CPU's
// colour conversion followed by its preprocess of the RGB image.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "backend_ops/test_backends.h"
#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/preprocess.h"
#include "ops/preprocess.h"

namespace kiln {
namespace {

using PreprocessParity = test::GpuParityTest;

TEST_F(PreprocessParity, GpuBackendsMatchTheCpu) {
  uint32_t seed = 2000;
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    for (ResizeFit fit : {ResizeFit::kStretch, ResizeFit::kLetterbox}) {
      for (PixelType type : {PixelType::kF32, PixelType::kF16}) {
        for (Layout layout : {Layout::kCHW, Layout::kHWC}) {
          for (bool swap : {false, true}) {
            const std::vector<std::pair<ImageShape, ImageShape>> pairs = {
                {{97, 61, 3, PixelType::kU8}, {64, 48, 3, type, layout}},
                {{37, 29, 4, PixelType::kU8}, {50, 51, 4, type, layout}},
                {{120, 33, 3, PixelType::kU8}, {32, 32, 3, type, layout}},
                {{1, 1, 3, PixelType::kU8}, {3, 5, 3, type, layout}},
            };
            std::vector<ImageShape> in_shapes;
            std::vector<ImageShape> out_shapes;
            for (const auto& [i, o] : pairs) {
              in_shapes.push_back(i);
              out_shapes.push_back(o);
            }
            if (!swap) {  // gray images only without swap
              in_shapes.push_back({45, 27, 1, PixelType::kU8});
              out_shapes.push_back({19, 40, 1, type, layout});
            }
            auto in = test::random_batch(in_shapes, seed++);
            PreprocessParams params;
            params.interp = interp;
            params.fit = fit;
            params.swap_rb = swap;
            params.pad[0] = 114;
            params.pad[1] = 0;
            params.pad[2] = 255;
            params.mean[3] = 0.5f;
            params.std[3] = 0.3f;
            auto expected = test::filled_batch(out_shapes);
            const OpCall cpu_call{OpKind::kPreprocess, &params, in.view(), expected.view(), nullptr};
            ASSERT_TRUE(m_cpu->run(cpu_call, {}).is_ok());
            for (auto& named : m_backends) {
              SCOPED_TRACE(named.name + " " + interp_name(interp) + (fit == ResizeFit::kLetterbox ? " letterbox " : " stretch ") +
                           pixel_type_name(type) + " " + layout_name(layout) + (swap ? " swap" : ""));
              auto actual = test::filled_batch(out_shapes);
              ASSERT_NO_FATAL_FAILURE(
                  test::gpu_run(named, OpCall{OpKind::kPreprocess, &params, in.view(), actual.view(), nullptr}));
              for (int64_t i = 0; i < actual.count(); ++i) {
                ASSERT_EQ(std::memcmp(actual[i].data, expected[i].data, actual[i].packed_bytes()), 0)
                    << "image " << i << ": " << test::image_diff(actual[i], expected[i], 0.0).first;
              }
            }
          }
        }
      }
    }
  }
}

// NVDEC's frames preprocessed in one kernel (PreprocessParams::nv12): every GPU backend's fused NV12 sampling gives
// the bytes of the colour conversion to RGB followed by the RGB preprocess, both run on the CPU as separate ops. Every
// interpolation and fit, every matrix and range, f32 CHW and f16 HWC, odd heights, a 2x1 picture, several frames in one
// batch.
TEST_F(PreprocessParity, Nv12FramesGiveTheirRgbConversionsPreprocess) {
  const std::vector<std::pair<int32_t, int32_t>> sizes = {{96, 60}, {38, 29}, {2, 1}, {130, 9}};
  uint32_t seed = 3000;
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    for (ResizeFit fit : {ResizeFit::kStretch, ResizeFit::kLetterbox}) {
      for (YuvMatrix matrix : {YuvMatrix::kBt601, YuvMatrix::kBt709, YuvMatrix::kBt2020}) {
        for (bool full : {false, true}) {
          // f32 CHW (the segmentation model's input) and f16 HWC, by turns.
          const PixelType type = full ? PixelType::kF16 : PixelType::kF32;
          const Layout layout = full ? Layout::kHWC : Layout::kCHW;
          const std::vector<ImageShape> out_shapes = {
              {64, 48, 3, type, layout}, {50, 51, 3, type, layout}, {3, 5, 3, type, layout}, {32, 32, 3, type, layout}};
          std::vector<ImageShape> nv12_shapes, rgb_shapes;
          for (auto [w, h] : sizes) {
            nv12_shapes.push_back({w, h + (h + 1) / 2, 1, PixelType::kU8, Layout::kHWC});
            rgb_shapes.push_back({w, h, 3, PixelType::kU8, Layout::kHWC});
          }
          const auto nv12 = test::random_batch(nv12_shapes, ++seed);
          ColorParams to_rgb;
          to_rgb.conversion = ColorConversion::kNv12ToRgb;
          to_rgb.yuv_matrix = matrix;
          to_rgb.yuv_full_range = full;
          auto rgb = test::filled_batch(rgb_shapes);
          ASSERT_TRUE(m_cpu->run(OpCall{OpKind::kColor, &to_rgb, nv12.view(), rgb.view(), nullptr}, {}).is_ok());
          PreprocessParams params;
          params.interp = interp;
          params.fit = fit;
          params.swap_rb = matrix == YuvMatrix::kBt709;
          params.pad[0] = 114;
          auto expected = test::filled_batch(out_shapes);
          ASSERT_TRUE(m_cpu->run(OpCall{OpKind::kPreprocess, &params, rgb.view(), expected.view(), nullptr}, {})
                          .is_ok());
          params.nv12 = true;
          params.yuv_matrix = matrix;
          params.yuv_full_range = full;
          auto on_cpu = test::filled_batch(out_shapes);
          ASSERT_TRUE(m_cpu->run(OpCall{OpKind::kPreprocess, &params, nv12.view(), on_cpu.view(), nullptr}, {})
                          .is_ok());
          for (int64_t i = 0; i < on_cpu.count(); ++i) {
            ASSERT_EQ(std::memcmp(on_cpu[i].data, expected[i].data, on_cpu[i].packed_bytes()), 0) << "cpu image " << i;
          }
          for (auto& named : m_backends) {
            SCOPED_TRACE(named.name + " " + interp_name(interp) + (fit == ResizeFit::kLetterbox ? " letterbox " : " ") +
                         enum_name(kYuvMatrixNames, matrix) + (full ? " full" : " limited"));
            auto actual = test::filled_batch(out_shapes);
            ASSERT_NO_FATAL_FAILURE(
                test::gpu_run(named, OpCall{OpKind::kPreprocess, &params, nv12.view(), actual.view(), nullptr}));
            for (int64_t i = 0; i < actual.count(); ++i) {
              ASSERT_EQ(std::memcmp(actual[i].data, expected[i].data, actual[i].packed_bytes()), 0)
                  << "image " << i << ": " << test::image_diff(actual[i], expected[i], 0.0).first;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln
