// Quality: every GPU backend vs the CPU on random var-shape batches (odd and tiny sizes, 1/3/4 channels, HWC and
// CHW, RGB and BGR). Tolerance: none. Every backend reduces to the same exact integer sums (the per-pixel float
// sqrt is correctly rounded everywhere and summed as exact 2^-23 fixed point), and the metrics are computed from
// those sums by the same host code, so GPU results must equal the CPU's bit for bit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/gpu_parity.h"
#include "common/image_ops_util.h"
#include "core/thread_pool.h"
#include "ops/quality.h"

namespace kiln {
namespace {

struct Case {
  std::string name;
  std::vector<ImageShape> shapes;
  bool bgr = false;
  uint32_t seed = 1;
  float lo = 0.0f;
  float hi = 255.0f;
};

std::vector<ImageShape> shapes_of(const std::vector<std::pair<int32_t, int32_t>>& sizes, int32_t channels,
                                  Layout layout) {
  std::vector<ImageShape> shapes;
  for (const auto& [w, h] : sizes) shapes.push_back(ImageShape{w, h, channels, PixelType::kU8, layout});
  return shapes;
}

std::vector<Case> cases() {
  const std::vector<std::pair<int32_t, int32_t>> sizes = {{1, 1}, {2, 3}, {3, 2}, {1, 9}, {9, 1}, {17, 13},
                                                          {64, 48}, {101, 67}, {333, 251}, {257, 16}, {640, 480}};
  std::vector<Case> out;
  uint32_t seed = 100;
  for (const int32_t c : {1, 3, 4}) {
    for (const Layout layout : {Layout::kHWC, Layout::kCHW}) {
      for (const bool bgr : {false, true}) {
        if (c == 1 && bgr) continue;
        out.push_back(Case{"c" + std::to_string(c) + (layout == Layout::kHWC ? "_hwc" : "_chw") + (bgr ? "_bgr" : ""),
                           shapes_of(sizes, c, layout), bgr, ++seed});
      }
    }
  }
  // Mixed channel counts in one batch, and a low-contrast batch.
  std::vector<ImageShape> mixed = {ImageShape{5, 5, 1}, ImageShape{31, 7, 3}, ImageShape{7, 31, 4},
                                   ImageShape{1920, 1080, 3}, ImageShape{2, 2, 4, PixelType::kU8, Layout::kCHW}};
  out.push_back(Case{"mixed", mixed, false, 900});
  out.push_back(Case{"low_contrast", shapes_of(sizes, 1, Layout::kHWC), false, 901, 120.0f, 123.0f});
  return out;
}

void expect_identical(const QualityMetrics& gpu, const QualityMetrics& cpu, const std::string& what) {
  EXPECT_EQ(gpu.blur, cpu.blur) << what;
  EXPECT_EQ(gpu.brightness, cpu.brightness) << what;
  EXPECT_EQ(gpu.contrast, cpu.contrast) << what;
  EXPECT_EQ(gpu.sharpness, cpu.sharpness) << what;
  EXPECT_EQ(gpu.occlusion, cpu.occlusion) << what;
  EXPECT_EQ(gpu.score, cpu.score) << what;
}

using QualityParity = test::GpuParityTest;

TEST_F(QualityParity, GpuMatchesCpu) {
  for (const Case& c : cases()) {
    const VarShapeBatch batch = test::random_batch(c.shapes, c.seed, c.lo, c.hi);
    QualityParams params;
    params.bgr = c.bgr;
    std::vector<QualityMetrics> want(static_cast<size_t>(batch.count()));
    const OpCall cpu_call{OpKind::kQuality, &params, batch.view(), VarShapeBatchView{}, want.data()};
    ASSERT_NO_FATAL_FAILURE(test::cpu_reference_run(*m_cpu, cpu_call)) << c.name;
    for (auto& [name, backend] : m_backends) {
      std::vector<QualityMetrics> got(static_cast<size_t>(batch.count()));
      const OpCall call{OpKind::kQuality, &params, batch.view(), VarShapeBatchView{}, got.data()};
      if (!backend->supports(call)) {
        ADD_FAILURE() << name << " does not support quality case " << c.name;
        continue;
      }
      const Status st = backend->run(call, {});
      ASSERT_TRUE(st.is_ok()) << name << " " << c.name << ": " << st.message();
      for (size_t i = 0; i < got.size(); ++i) {
        const ImageShape& s = c.shapes[i];
        expect_identical(got[i], want[i],
                         name + " " + c.name + " image " + std::to_string(i) + " (" + std::to_string(s.width) + "x" +
                             std::to_string(s.height) + "x" + std::to_string(s.channels) + ")");
      }
    }
  }
}

// An empty batch is a no-op on every GPU backend.
TEST_F(QualityParity, EmptyBatchOnGpu) {
  QualityParams params;
  QualityMetrics m;
  const OpCall call{OpKind::kQuality, &params, VarShapeBatchView{}, VarShapeBatchView{}, &m};
  for (auto& [name, backend] : m_backends) {
    ASSERT_TRUE(backend->supports(call)) << name;
    EXPECT_TRUE(backend->run(call, {}).is_ok()) << name;
  }
}

}  // namespace
}  // namespace kiln
