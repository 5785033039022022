// Resize on every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU reference on
// random var-shape batches: every interpolation, u8/f32, 1/3/4 channels, HWC/CHW, stretch/letterbox, crops.
// Tolerance 0: the tables are built once on the host and every backend evaluates the same float expression
// (resize_px.h) in the same order, without contraction.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_ops/test_backends.h"
#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/resize.h"
#include "ops/resize.h"

namespace kiln {
namespace {

struct ParityCase {
  Interp interp;
  ResizeFit fit;
  PixelType type;
  Layout layout;
  bool rois;
};

std::vector<ParityCase> parity_cases() {
  std::vector<ParityCase> cases;
  for (Interp interp : {Interp::kNearest, Interp::kBilinear, Interp::kArea, Interp::kBicubic}) {
    for (PixelType type : {PixelType::kU8, PixelType::kF32}) {
      cases.push_back({interp, ResizeFit::kStretch, type, Layout::kHWC, false});
      cases.push_back({interp, ResizeFit::kLetterbox, type, Layout::kHWC, false});
      cases.push_back({interp, ResizeFit::kStretch, type, Layout::kHWC, true});
      cases.push_back({interp, ResizeFit::kStretch, type, Layout::kCHW, false});
    }
  }
  return cases;
}

using ResizeParity = test::GpuParityTest;

TEST_F(ResizeParity, GpuBackendsMatchTheCpu) {
  uint32_t seed = 1000;
  for (const ParityCase& c : parity_cases()) {
    // Odd sizes, up and down, one pixel, 1/3/4 channels in one var-shape batch.
    const std::vector<std::pair<ImageShape, ImageShape>> pairs = {
        {{37, 29, 3, c.type, c.layout}, {64, 48, 3, c.type, c.layout}},
        {{97, 61, 1, c.type, c.layout}, {31, 23, 1, c.type, c.layout}},
        {{64, 48, 4, c.type, c.layout}, {32, 24, 4, c.type, c.layout}},
        {{100, 80, 3, c.type, c.layout}, {30, 121, 3, c.type, c.layout}},
        {{1, 1, 1, c.type, c.layout}, {5, 3, 1, c.type, c.layout}},
        {{211, 150, 3, c.type, c.layout}, {61, 47, 3, c.type, c.layout}},
    };
    std::vector<ImageShape> in_shapes;
    std::vector<ImageShape> out_shapes;
    std::vector<RectI> rois;
    for (const auto& [i, o] : pairs) {
      in_shapes.push_back(i);
      out_shapes.push_back(o);
      rois.push_back(RectI{i.width / 4, i.height / 5, i.width - i.width / 4 - i.width / 7,
                           i.height - i.height / 5 - i.height / 6});
    }
    auto in = test::random_batch(in_shapes, seed++);
    ResizeParams params;
    params.interp = c.interp;
    params.fit = c.fit;
    params.pad[0] = 1.5f;
    params.pad[1] = 100.25f;
    params.pad[2] = 254.5f;
    params.pad[3] = 7.0f;
    if (c.rois) params.rois = rois.data();
    auto expected = test::filled_batch(out_shapes);
    const OpCall cpu_call{OpKind::kResize, &params, in.view(), expected.view(), nullptr};
    ASSERT_TRUE(m_cpu->run(cpu_call, {}).is_ok());
    for (auto& named : m_backends) {
      const std::string trace = named.name + " " + interp_name(c.interp) + (c.fit == ResizeFit::kLetterbox ? " letterbox " : " stretch ") +
                                pixel_type_name(c.type) + " " + layout_name(c.layout) + (c.rois ? " rois" : "");
      SCOPED_TRACE(trace);
      auto actual = test::filled_batch(out_shapes);
      ASSERT_NO_FATAL_FAILURE(
          test::gpu_run(named, OpCall{OpKind::kResize, &params, in.view(), actual.view(), nullptr}));
      for (int64_t i = 0; i < actual.count(); ++i) {
        const auto diff = test::image_diff(actual[i], expected[i], 0.0);
        EXPECT_EQ(diff.over, 0) << "image " << i << ": " << diff.first;
      }
    }
  }
}

}  // namespace
}  // namespace kiln
