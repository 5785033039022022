// Fused preprocess on every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU
// reference on random var-shape batches: every interpolation, stretch/letterbox, swap, f32/f16, HWC/CHW,
// 1/3/4 channels. Tolerance 0: same tables, same float expression and order on every backend, correctly
// rounded division, and the same integer f16 rounding (image_px.h).
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

}  // namespace
}  // namespace kiln
