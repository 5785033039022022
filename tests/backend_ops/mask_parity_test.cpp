// mask: every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU reference on random
// var-shape batches: odd sizes, 1/3/4/21 channels, f32 and f16, argmax and thresholds of every activation,
// every smoothing, the largest-component filter. Tolerance 0: the per-pixel math is mask_px.h on every backend,
// without libm transcendentals (kiln_expf is +,-,*,floor and exponent bits; no FMA contraction anywhere),
// and the component filter is the same host function.
#include <gtest/gtest.h>

#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/mask.h"
#include "ops/mask.h"

namespace kiln {
namespace {

struct ParityCase {
  int32_t channels;
  PixelType type;
  MaskParams params;
};

std::vector<ParityCase> parity_cases() {
  std::vector<ParityCase> cases;
  const auto add = [&](int32_t channels, PixelType type, MaskActivation act, int32_t target, float t,
                       MaskSmoothing s, int32_t radius, bool largest) {
    cases.push_back({channels, type,
                     MaskParams{.activation = act, .target_class = target, .threshold = t, .smoothing = s,
                                .radius = radius, .largest_component = largest, .foreground = 255}});
  };
  for (PixelType type : {PixelType::kF32, PixelType::kF16}) {
    add(1, type, MaskActivation::kAuto, -1, 0.5f, MaskSmoothing::kNone, 1, false);
    add(1, type, MaskActivation::kSigmoid, 0, 0.73f, MaskSmoothing::kMedian, 2, true);
    add(1, type, MaskActivation::kNone, 0, 0.31f, MaskSmoothing::kOpen, 1, false);
    add(3, type, MaskActivation::kAuto, -1, 0.5f, MaskSmoothing::kNone, 1, false);
    add(3, type, MaskActivation::kSoftmax, 1, 0.4f, MaskSmoothing::kNone, 1, false);
    add(3, type, MaskActivation::kSoftmax, 2, 0.35f, MaskSmoothing::kClose, 2, true);
    add(3, type, MaskActivation::kSigmoid, 0, 0.6f, MaskSmoothing::kMedian, 1, false);
    add(4, type, MaskActivation::kAuto, -1, 0.5f, MaskSmoothing::kMedian, 3, false);
    add(4, type, MaskActivation::kSoftmax, 3, 0.3f, MaskSmoothing::kOpen, 2, true);
    add(4, type, MaskActivation::kAuto, -1, 0.5f, MaskSmoothing::kClose, 1, true);
  }
  add(21, PixelType::kF32, MaskActivation::kSoftmax, 5, 0.1f, MaskSmoothing::kNone, 1, false);
  add(21, PixelType::kF32, MaskActivation::kAuto, -1, 0.5f, MaskSmoothing::kMedian, 1, false);
  return cases;
}

using MaskParity = test::GpuParityTest;

TEST_F(MaskParity, GpuMatchesCpu) {
  uint32_t seed = 1000;
  for (auto& named : m_backends) {
    int64_t ran = 0;
    for (const auto& c : parity_cases()) {
      SCOPED_TRACE(testing::Message() << named.name << " C=" << c.channels << " " << pixel_type_name(c.type)
                                      << " target=" << c.params.target_class << " "
                                      << mask_smoothing_name(c.params.smoothing) << " r=" << c.params.radius
                                      << " largest=" << c.params.largest_component);
      std::vector<ImageShape> in_shapes;
      std::vector<ImageShape> out_shapes;
      for (auto [w, h] : std::vector<std::pair<int32_t, int32_t>>{{37, 23}, {64, 64}, {1, 1}, {5, 17}, {130, 7}}) {
        in_shapes.push_back({w, h, c.channels, c.type, Layout::kCHW});
        out_shapes.push_back({w, h, 1, PixelType::kU8, Layout::kHWC});
      }
      // Logits in [-6, 6] (probabilities in [0, 1] for activation none).
      const bool probs = c.params.activation == MaskActivation::kNone;
      const auto in = test::random_batch(in_shapes, seed++, probs ? 0.0f : -6.0f, probs ? 1.0f : 6.0f);
      const auto want = test::filled_batch(out_shapes, 0xCD);
      const auto got = test::filled_batch(out_shapes, 0xAB);
      const OpCall cpu_call{OpKind::kMask, &c.params, in.view(), want.view(), nullptr};
      const OpCall gpu_call{OpKind::kMask, &c.params, in.view(), got.view(), nullptr};
      ASSERT_NO_FATAL_FAILURE(test::cpu_reference_run(*m_cpu, cpu_call));
      if (!named.backend->supports(gpu_call)) {
        ADD_FAILURE() << named.name << " does not support a host-batch mask call";
        continue;
      }
      const Status status = named.backend->run(gpu_call, {});
      ASSERT_TRUE(status.is_ok()) << status.to_string();
      for (int64_t i = 0; i < in.count(); ++i) {
        const test::ImageDiff d = test::image_diff(want[i], got[i]);
        EXPECT_EQ(d.over, 0) << "image " << i << " (" << in[i].width << "x" << in[i].height << "): " << d.over
                             << " pixels differ, first " << d.first;
      }
      ++ran;
    }
    EXPECT_EQ(ran, static_cast<int64_t>(parity_cases().size())) << named.name;
  }
}

// The largest-component filter is host code, so CUDA declines device batches that ask for it (placement then
// picks another backend or refuses the call).
TEST_F(MaskParity, CudaDeviceBatchWithLargestComponentIsNotSupported) {
  for (auto& named : m_backends) {
    if (named.name != "cuda") continue;
    const auto in = test::random_batch({{8, 8, 2, PixelType::kF32, Layout::kCHW}}, 1);
    const auto out = test::filled_batch({{8, 8, 1, PixelType::kU8, Layout::kHWC}});
    MaskParams p;
    p.largest_component = true;
    VarShapeBatchView in_view = in.view();
    VarShapeBatchView out_view = out.view();
    in_view.space = MemorySpace::kDevice;
    out_view.space = MemorySpace::kDevice;
    const OpCall call{OpKind::kMask, &p, in_view, out_view, nullptr};
    EXPECT_FALSE(named.backend->supports(call));
    return;
  }
  KILN_GPU_SKIP("no CUDA device");
}

}  // namespace
}  // namespace kiln
