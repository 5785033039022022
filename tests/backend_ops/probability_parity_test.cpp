// probability: every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU reference:
// sigmoid, softmax and plain values, CHW and HWC, f32 and f16, with and without temporal smoothing into the
// previous maps, var-shape batches; on CUDA also device batches in place (the segment engine's case: a model output
// left on the device smoothed into the stream's map there). Tolerance 0: probability_px.h on every backend, with
// kiln_expf / kiln_log2f (no libm), no FMA contraction and IEEE division anywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "core/backend_block.h"
#include "kiln/image_ops.h"
#include "kiln/ops/probability.h"
#include "ops/image_px.h"

namespace kiln {
namespace {

using ProbabilityParity = test::GpuParityTest;

struct ProbabilityCase {
  ProbabilityParams params;
  int32_t channels = 1;
  Layout layout = Layout::kCHW;
  PixelType type = PixelType::kF32;
};

std::vector<ProbabilityCase> probability_cases() {
  std::vector<ProbabilityCase> cases;
  for (const float temporal : {0.0f, 0.7f, 1.0f}) {
    ProbabilityCase c;
    c.params.temporal = temporal;
    cases.push_back(c);  // sigmoid of one channel
    c.params.activation = ProbabilityActivation::kNone;
    cases.push_back(c);
    c.params.activation = ProbabilityActivation::kSoftmax;
    c.params.channel = 1;
    c.channels = 3;
    cases.push_back(c);
    c.layout = Layout::kHWC;
    c.type = PixelType::kF16;
    cases.push_back(c);
    c.params.activation = ProbabilityActivation::kSigmoid;
    c.params.channel = 2;
    cases.push_back(c);
  }
  return cases;
}

const std::vector<std::pair<int32_t, int32_t>> kSizes = {{256, 256}, {37, 11}, {1, 1}};

std::vector<ImageShape> input_shapes(const ProbabilityCase& c) {
  std::vector<ImageShape> shapes;
  for (const auto& [w, h] : kSizes) shapes.push_back({w, h, c.channels, c.type, c.layout});
  return shapes;
}

std::vector<ImageShape> map_shapes() {
  std::vector<ImageShape> shapes;
  for (const auto& [w, h] : kSizes) shapes.push_back({w, h, 1, PixelType::kF32, Layout::kHWC});
  return shapes;
}

// NaN, inf and values exactly on the smoothing's steps at the first values of an image's first row (f32 or f16).
void values_plant(const ImageView& image, const std::vector<float>& values) {
  for (size_t k = 0; k < values.size() && k < static_cast<size_t>(image.width); ++k) {
    if (image.type == PixelType::kF32) {
      image.row<float>(0)[k] = values[k];
    } else {
      image.row<uint16_t>(0)[k] = static_cast<uint16_t>(kiln_float_to_half(values[k]));
    }
  }
}

TEST_F(ProbabilityParity, GpuMatchesCpu) {
  const std::vector<ProbabilityCase> cases = probability_cases();
  uint32_t seed = 500;
  for (auto& named : m_backends) {
    int64_t ran = 0;
    for (const ProbabilityCase& c : cases) {
      SCOPED_TRACE(testing::Message() << named.name << " " << probability_activation_name(c.params.activation)
                                      << " channels " << c.channels << " temporal " << c.params.temporal);
      const float lo = c.params.activation == ProbabilityActivation::kNone ? -0.2f : -12.0f;
      const float hi = c.params.activation == ProbabilityActivation::kNone ? 1.2f : 12.0f;
      const auto in = test::random_batch(input_shapes(c), seed, lo, hi);
      values_plant(in[0], {std::nanf(""), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), 0.5f, 0.0f, 1.0f});
      const auto want = test::random_batch(map_shapes(), seed + 1, 0.0f, 1.0f);  // the previous smoothed maps
      const auto got = test::random_batch(map_shapes(), seed + 1, 0.0f, 1.0f);
      seed += 2;
      const OpCall cpu_call{OpKind::kProbability, &c.params, in.view(), want.view(), nullptr};
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

// Device-space batches on CUDA, as the segment engine passes them: the model's output and the stream's smoothed map
// both in device memory, the map updated in place over three frames.
TEST_F(ProbabilityParity, CudaSmoothsDeviceMapsInPlace) {
  int64_t ran = 0;
  for (auto& named : m_backends) {
    if (named.name != "cuda") continue;
    Backend& cuda = *named.backend;
    ProbabilityParams p;
    p.activation = ProbabilityActivation::kSoftmax;
    p.channel = 1;
    p.temporal = 0.7f;
    const ImageShape logits_shape{256, 144, 2, PixelType::kF32, Layout::kCHW};
    const ImageShape map_shape{256, 144, 1, PixelType::kF32, Layout::kHWC};
    auto want = test::random_batch({map_shape}, 41, 0.0f, 1.0f);
    auto state_block = DeviceBlock::acquire(cuda, want[0].packed_bytes());
    auto logits_block = DeviceBlock::acquire(cuda, static_cast<size_t>(256) * 144 * 2 * 4);
    ASSERT_TRUE(state_block.is_ok() && logits_block.is_ok());
    const ImageView state_view = image_view_packed(state_block.value().data(), 256, 144, 1, PixelType::kF32);
    const ImageView logits_view = image_view_packed(logits_block.value().data(), 256, 144, 2, PixelType::kF32,
                                                    Layout::kCHW);
    const VarShapeBatch state_dev = VarShapeBatch::wrap({state_view}, MemorySpace::kDevice);
    const VarShapeBatch logits_dev = VarShapeBatch::wrap({logits_view}, MemorySpace::kDevice);
    ASSERT_TRUE(cuda.images_upload(want.view(), state_dev.view()).is_ok());
    for (uint32_t frame = 0; frame < 3; ++frame) {
      const auto logits = test::random_batch({logits_shape}, 60 + frame, -6.0f, 6.0f);
      ASSERT_TRUE(cuda.images_upload(logits.view(), logits_dev.view()).is_ok());
      ASSERT_NO_FATAL_FAILURE(
          test::cpu_reference_run(*m_cpu, OpCall{OpKind::kProbability, &p, logits.view(), want.view(), nullptr}));
      ASSERT_NO_FATAL_FAILURE(
          test::gpu_run(named, OpCall{OpKind::kProbability, &p, logits_dev.view(), state_dev.view(), nullptr}));
    }
    auto got = test::filled_batch({map_shape});
    ASSERT_TRUE(cuda.device_download(state_view.data, got[0].data, got[0].packed_bytes()).is_ok());
    const test::ImageDiff d = test::image_diff(want[0], got[0]);
    EXPECT_EQ(d.over, 0) << d.over << " pixels differ, first " << d.first;
    ++ran;
  }
  if (ran == 0) KILN_GPU_SKIP("no CUDA device here: the device-batch case runs on the lent GPU");
}

}  // namespace
}  // namespace kiln
