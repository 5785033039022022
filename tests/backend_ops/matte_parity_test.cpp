// matte: every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU reference: random and
// smooth probability maps, up- and downsampling, whole maps and letterbox regions, masks and alphas, var-shape
// batches. Tolerance 0: the per-pixel math is matte_px.h on every backend, with no FMA contraction and IEEE division
// anywhere, and the CPU's run-by-run mask rows equal that function (tests/ops/matte_reference_test.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/matte.h"

namespace kiln {
namespace {

using MatteParity = test::GpuParityTest;

TEST_F(MatteParity, GpuMatchesCpu) {
  struct Case {
    MatteParams params;
    std::vector<std::pair<int32_t, int32_t>> maps, outs;
  };
  std::vector<Case> cases;
  for (const MatteOutput output : {MatteOutput::kMask, MatteOutput::kAlpha}) {
    MatteParams p;
    p.output = output;
    cases.push_back({p, {{256, 256}, {17, 9}, {1, 1}}, {{1280, 720}, {131, 67}, {5, 3}}});
    p.threshold = 0.3f;
    p.feather = 0.25f;
    p.foreground = 77;
    cases.push_back({p, {{64, 48}, {40, 40}}, {{32, 20}, {41, 39}}});
    p.region = {0.0f, 32.0f, 40.0f, 8.0f};  // a letterbox band of a 40 x 48 or larger map
    cases.push_back({p, {{40, 48}, {64, 48}}, {{320, 64}, {333, 65}}});
    p.region = {0.5f, 1.25f, 3.0f, 2.5f};
    cases.push_back({p, {{4, 4}, {7, 5}}, {{97, 61}, {8, 8}}});
  }
  uint32_t seed = 300;
  for (auto& named : m_backends) {
    int64_t ran = 0;
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << named.name << " " << matte_output_name(c.params.output) << " region "
                                      << c.params.region.width << "x" << c.params.region.height);
      std::vector<ImageShape> in_shapes, out_shapes;
      for (size_t i = 0; i < c.maps.size(); ++i) {
        in_shapes.push_back({c.maps[i].first, c.maps[i].second, 1, PixelType::kF32, Layout::kHWC});
        out_shapes.push_back({c.outs[i].first, c.outs[i].second, 1, PixelType::kU8, Layout::kHWC});
      }
      const auto in = test::random_batch(in_shapes, seed++, 0.0f, 1.0f);
      const auto want = test::filled_batch(out_shapes, 0xCD);
      const auto got = test::filled_batch(out_shapes, 0xAB);
      const OpCall cpu_call{OpKind::kMatte, &c.params, in.view(), want.view(), nullptr};
      ASSERT_NO_FATAL_FAILURE(test::parity_run(*m_cpu, named, cpu_call, got.view()));
      for (int64_t i = 0; i < in.count(); ++i) {
        const test::ImageDiff d = test::image_diff(want[i], got[i]);
        EXPECT_EQ(d.over, 0) << "image " << i << " (" << got[i].width << "x" << got[i].height << "): " << d.over
                             << " pixels differ, first " << d.first;
      }
      ++ran;
    }
    EXPECT_EQ(ran, static_cast<int64_t>(cases.size())) << named.name;
  }
}

}  // namespace
}  // namespace kiln
