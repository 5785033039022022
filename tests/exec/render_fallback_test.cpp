// FallbackRenderer against a scripted "GPU" that renders on the CPU but fails on demand.
#include <gtest/gtest.h>

#include <atomic>

#include "common/reference_render.h"
#include "exec/render_fallback.h"

namespace kiln {
namespace {

class ScriptedGpu final : public Backend {
 public:
  int64_t max_batch = 1 << 30;  // larger batches fail with OutOfMemory
  int64_t fail_call = 0;        // this call (1-based) fails with DeviceError
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> rendered{0};

  BackendKind kind() const override { return BackendKind::kOpenCL; }
  std::string name() const override { return "scripted-gpu"; }
  bool is_gpu() const override { return true; }
  std::vector<DeviceInfo> devices() const override { return {DeviceInfo{"fake", "test", "1.0", 0, 0, 1, 0}}; }
  bool supports(const OpRequest&) const override { return true; }
  Status render(const RenderParams& p, const WindowBatch& w, const BatchView& out, ThreadPool*, RenderTimings*) override {
    const int64_t call = ++calls;
    if (call == fail_call) return Status(Errc::kDeviceError, "launch failed: unspecified launch failure");
    if (w.count > max_batch) return Status(Errc::kOutOfMemory, "cudaMalloc failed");
    rendered += w.count;
    return m_cpu->render(p, w, out, nullptr);
  }

 private:
  std::unique_ptr<Backend> m_cpu = cpu_backend_create();
};

class RenderFallback : public ::testing::Test {
 protected:
  void SetUp() override {
    series = test::random_walk(300, 5);
    for (int64_t s = 0; s < 200; ++s) starts.push_back(s);
    params.width = 64;
    params.height = 32;
    expected = render(*cpu, 200);
  }
  std::vector<uint8_t> render(Backend& backend, int64_t batch) {
    std::vector<uint8_t> out(64 * 32 * starts.size());
    for (int64_t first = 0; first < static_cast<int64_t>(starts.size()); first += batch) {
      const int64_t n = std::min<int64_t>(batch, static_cast<int64_t>(starts.size()) - first);
      const WindowBatch w{series.data(), 1, starts.data() + first, n, 50};
      const BatchView v{out.data() + first * 64 * 32, n, 64, 32, 1, PixelType::kU8, 64 * 32};
      EXPECT_TRUE(backend.render(params, w, v, nullptr).is_ok());
    }
    return out;
  }
  std::vector<uint8_t> render_with(FallbackRenderer& r, int64_t batch, Status* last) {
    std::vector<uint8_t> out(64 * 32 * starts.size());
    for (int64_t first = 0; first < static_cast<int64_t>(starts.size()); first += batch) {
      const int64_t n = std::min<int64_t>(batch, static_cast<int64_t>(starts.size()) - first);
      const WindowBatch w{series.data(), 1, starts.data() + first, n, 50};
      const BatchView v{out.data() + first * 64 * 32, n, 64, 32, 1, PixelType::kU8, 64 * 32};
      *last = r.render(params, w, v);
      if (!last->is_ok()) break;
    }
    return out;
  }

  std::vector<float> series;
  std::vector<int64_t> starts;
  RenderParams params;
  std::unique_ptr<Backend> cpu = cpu_backend_create();
  std::vector<uint8_t> expected;
  std::vector<std::string> logged;
};

TEST_F(RenderFallback, OutOfMemoryHalvesTheBatchAndRemembersWhatWorked) {
  ScriptedGpu gpu;
  gpu.max_batch = 30;
  FallbackRenderer r(gpu, *cpu, true, 100, [&](const std::string& line) { logged.push_back(line); });
  Status status;
  EXPECT_EQ(render_with(r, 100, &status), expected);
  ASSERT_TRUE(status.is_ok());
  EXPECT_EQ(r.batch_limit(), 25);  // 100 -> 50 -> 25
  EXPECT_TRUE(r.on_gpu());
  EXPECT_EQ(gpu.rendered.load(), 200);
  EXPECT_EQ(r.fallbacks(), 2);
  EXPECT_EQ(logged.size(), 2u);  // one line per distinct halving, not per batch
  EXPECT_NE(r.report_json().find("\"gpu_batch_size\":25"), std::string::npos);
}

TEST_F(RenderFallback, DeviceErrorMovesTheRestToTheCpu) {
  ScriptedGpu gpu;
  gpu.fail_call = 3;
  FallbackRenderer r(gpu, *cpu, true, 40, [&](const std::string& line) { logged.push_back(line); });
  Status status;
  EXPECT_EQ(render_with(r, 40, &status), expected);
  ASSERT_TRUE(status.is_ok());
  EXPECT_FALSE(r.on_gpu());
  EXPECT_EQ(gpu.calls.load(), 3);  // never asked again after the failure
  EXPECT_EQ(gpu.rendered.load(), 80);
  EXPECT_EQ(r.fallbacks(), 1);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("unspecified launch failure"), std::string::npos);
  EXPECT_NE(r.report_json().find("\"moved_to_cpu\":true"), std::string::npos);
}

TEST_F(RenderFallback, WithoutFallbackTheErrorStopsTheJob) {
  ScriptedGpu gpu;
  gpu.fail_call = 2;
  FallbackRenderer r(gpu, *cpu, false, 50, {});
  Status status;
  render_with(r, 50, &status);
  EXPECT_EQ(status.code(), Errc::kDeviceError);
  EXPECT_EQ(r.fallbacks(), 0);
}

TEST_F(RenderFallback, OutOfMemoryOnASingleImageGoesToTheCpu) {
  ScriptedGpu gpu;
  gpu.max_batch = 0;
  FallbackRenderer r(gpu, *cpu, true, 8, {});
  Status status;
  EXPECT_EQ(render_with(r, 8, &status), expected);
  EXPECT_TRUE(status.is_ok());
  EXPECT_FALSE(r.on_gpu());
}

}  // namespace
}  // namespace kiln
