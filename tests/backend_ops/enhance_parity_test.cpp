// The enhance family on every GPU backend (OpenCL on PoCL here; CUDA where a device exists) against the CPU
// reference: random var-shape batches (odd sizes, 1/3/4 channels), each step alone and all together. Tolerance 0:
// the steps are integer arithmetic, host-built tables and float operations in one fixed order on every backend
// (no contraction, correctly rounded division), so the bytes must match. SKIPPED without a GPU backend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "kiln/ops/enhance.h"
#include "ops/enhance.h"

namespace kiln::test {
namespace {

struct ParityCase {
  std::string name;
  EnhanceParams params;
};

std::vector<ParityCase> parity_cases() {
  std::vector<ParityCase> cases;
  EnhanceParams p;
  cases.push_back({"identity", p});
  p = {};
  p.contrast = 1.15f;
  p.brightness = -7.3f;
  cases.push_back({"linear", p});
  p = {};
  p.gamma = 2.2f;
  cases.push_back({"gamma", p});
  p = {};
  p.pil_contrast = 1.15f;
  cases.push_back({"pil_contrast", p});
  p.pil_contrast = -0.7f;
  p.bgr = true;
  cases.push_back({"pil_contrast_bgr_negative", p});
  p = {};
  p.pil_sharpness = 1.1f;
  cases.push_back({"pil_sharpness", p});
  p.pil_sharpness = 3.5f;
  cases.push_back({"pil_sharpness_strong", p});
  p = {};
  p.unsharp_radius = 1.0f;
  p.unsharp_percent = 120;
  p.unsharp_threshold = 3;
  cases.push_back({"unsharp", p});
  p.unsharp_radius = 4.3f;
  p.unsharp_percent = 250;
  p.unsharp_threshold = 0;
  cases.push_back({"unsharp_wide", p});
  cases.push_back({"predecessor", enhance_params_predecessor()});
  p = enhance_params_predecessor();
  p.contrast = 1.2f;
  p.brightness = 4.0f;
  p.gamma = 0.8f;
  cases.push_back({"all_steps", p});
  return cases;
}

std::vector<ImageShape> parity_shapes() {
  return {{37, 23, 1}, {64, 48, 3}, {17, 31, 4}, {5, 3, 3}, {1, 7, 1}, {3, 1, 4},
          {129, 67, 3}, {2, 2, 1}, {200, 9, 4}, {11, 150, 1}};
}

using EnhanceParity = GpuParityTest;

TEST_F(EnhanceParity, GpuMatchesCpu) {
  const std::vector<ImageShape> shapes = parity_shapes();
  const VarShapeBatch in = random_batch(shapes, 1234);
  for (const ParityCase& k : parity_cases()) {
    VarShapeBatch expected = filled_batch(shapes);
    ASSERT_NO_FATAL_FAILURE(
        cpu_reference_run(*m_cpu, OpCall{OpKind::kEnhance, &k.params, in.view(), expected.view(), nullptr}))
        << k.name;
    for (auto& gpu : m_backends) {
      VarShapeBatch got = filled_batch(shapes);
      ASSERT_NO_FATAL_FAILURE(gpu_run(gpu, OpCall{OpKind::kEnhance, &k.params, in.view(), got.view(), nullptr}))
          << k.name;
      for (int64_t i = 0; i < in.count(); ++i) {
        const ImageDiff d = image_diff(expected[i], got[i]);
        EXPECT_EQ(d.max_abs, 0.0) << gpu.name << " " << k.name << " image " << i << " (" << shapes[i].width << "x"
                                  << shapes[i].height << "x" << shapes[i].channels << "): " << d.first;
      }
    }
  }
}

TEST_F(EnhanceParity, StridedViewsAndSingleImage) {
  VarShapeBatch big = random_batch({{80, 60, 3}}, 99);
  const VarShapeBatch in = VarShapeBatch::wrap({big[0].crop(3, 5, 61, 41)});
  const EnhanceParams p = enhance_params_predecessor();
  VarShapeBatch expected = filled_batch({{61, 41, 3}});
  ASSERT_TRUE(m_cpu->run(OpCall{OpKind::kEnhance, &p, in.view(), expected.view(), nullptr}, {}).is_ok());
  for (auto& gpu : m_backends) {
    VarShapeBatch out_big = filled_batch({{70, 50, 3}});
    const VarShapeBatch out = VarShapeBatch::wrap({out_big[0].crop(2, 4, 61, 41)});
    const Status s = gpu.backend->run(OpCall{OpKind::kEnhance, &p, in.view(), out.view(), nullptr}, {});
    ASSERT_TRUE(s.is_ok()) << gpu.name << ": " << s.message();
    EXPECT_EQ(image_diff(expected[0], out[0]).max_abs, 0.0) << gpu.name;
  }
}

// Through op_run with a GPU-only placement: the public wrapper reaches the GPU path and reports it.
TEST_F(EnhanceParity, CoverageListing) {
  const VarShapeBatch in = random_batch({{16, 16, 1}, {16, 16, 3}, {16, 16, 4}}, 5);
  VarShapeBatch out = filled_batch({{16, 16, 1}, {16, 16, 3}, {16, 16, 4}});
  for (const ParityCase& k : parity_cases()) {
    const OpCall call{OpKind::kEnhance, &k.params, in.view(), out.view(), nullptr};
    for (auto& gpu : m_backends) {
      EXPECT_TRUE(gpu.backend->supports(call)) << gpu.name << " " << k.name;
    }
  }
}

}  // namespace
}  // namespace kiln::test
