// OpExecutor against a scripted "GPU" that runs on the CPU but fails on demand: out-of-memory halving, moving to
// the CPU after a device error, no fallback when it is off or the mode is gpu, reports, per-image parameters of
// sliced calls, and a GPU stream pinning the placement.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "common/reference_render.h"
#include "kiln/image_ops.h"

namespace kiln {
namespace {

class ScriptedGpu final : public Backend {
 public:
  int64_t max_batch = 1 << 30;  // larger batches fail with OutOfMemory
  int64_t fail_call = 0;        // this call (1-based) fails with DeviceError
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> images{0};

  BackendKind kind() const override { return BackendKind::kOpenCL; }
  std::string name() const override { return "scripted-gpu"; }
  bool is_gpu() const override { return true; }
  std::vector<DeviceInfo> devices() const override { return {DeviceInfo{"fake", "test", "1.0", 0, 0, 1, 0}}; }
  bool supports(const OpCall&) const override { return true; }
  Status run(const OpCall& call, const RunContext& ctx) override {
    const int64_t n = ++calls;
    if (n == fail_call) return Status(Errc::kDeviceError, "launch failed: unspecified launch failure");
    if (call.in.count > max_batch) return Status(Errc::kOutOfMemory, "cudaMalloc failed");
    images += call.in.count;
    if (call.in.space == MemorySpace::kDevice) return Status::ok();  // counted only: no device memory to run on
    return m_cpu->run(call, RunContext{nullptr, nullptr, ctx.timings});
  }

 private:
  std::unique_ptr<Backend> m_cpu = cpu_backend_create();
};

// A CPU and a scripted GPU (owned by the registry).
struct ScriptedRegistry {
  BackendRegistry registry;
  ScriptedGpu* gpu = nullptr;

  ScriptedRegistry() {
    auto scripted = std::make_unique<ScriptedGpu>();
    gpu = scripted.get();
    registry.add(cpu_backend_create(), {BackendKind::kCpu, true, "always"});
    registry.add(std::move(scripted), {BackendKind::kOpenCL, true, "scripted"});
  }
};

class Executor : public ::testing::Test {
 protected:
  void SetUp() override {
    series = test::random_walk(300, 5);
    for (int64_t s = 0; s < 200; ++s) starts.push_back(s);
    params.width = 64;
    params.height = 32;
    ExecOptions cpu;
    cpu.mode = ExecMode::kCpu;
    expected = render_with(cpu, 200, nullptr, nullptr);
    gpu = scripted.gpu;
  }
  // Renders every window in calls of `batch` through one executor on `registry`; *last is the first failure.
  std::vector<uint8_t> render_with(const ExecOptions& options, int64_t batch, const BackendRegistry* registry,
                                   Status* last) {
    auto executor = std::make_unique<OpExecutor>(options, [&](const std::string& line) { logged.push_back(line); },
                                                 registry);
    std::vector<uint8_t> out(64 * 32 * starts.size());
    for (int64_t first = 0; first < static_cast<int64_t>(starts.size()); first += batch) {
      const int64_t n = std::min<int64_t>(batch, static_cast<int64_t>(starts.size()) - first);
      const WindowBatch w{series.data(), 1, starts.data() + first, n, 50};
      const BatchView v{out.data() + first * 64 * 32, n, 64, 32, 1, PixelType::kU8, 64 * 32};
      const Status run = executor->run(RenderCall(params, w, v).call());
      if (last != nullptr) *last = run;
      if (!run.is_ok()) break;
    }
    fallbacks = executor->fallbacks();
    moved = executor->moved_to_cpu();
    limit = executor->gpu_batch_limit();
    report = executor->report_json();
    return out;
  }
  // Renders on the scripted registry in calls of `batch` images, at most `batch` per GPU run; `status` receives
  // the first failure.
  std::vector<uint8_t> render_scripted(int64_t batch, ExecMode mode = ExecMode::kAuto, bool fallback_on_error = true) {
    ExecOptions options;
    options.mode = mode;
    options.fallback_on_error = fallback_on_error;
    options.gpu_batch_limit = batch;
    return render_with(options, batch, &scripted.registry, &status);
  }

  ScriptedRegistry scripted;
  ScriptedGpu* gpu = nullptr;
  std::vector<float> series;
  std::vector<int64_t> starts;
  RenderParams params;
  std::vector<uint8_t> expected;
  std::vector<std::string> logged;
  int64_t fallbacks = 0;
  bool moved = false;
  int64_t limit = 0;
  std::string report;
  Status status;
};

TEST_F(Executor, OutOfMemoryHalvesTheBatchAndRemembersWhatWorked) {
  gpu->max_batch = 30;
  EXPECT_EQ(render_scripted(100), expected);
  ASSERT_TRUE(status.is_ok());
  EXPECT_EQ(limit, 25);  // 100 -> 50 -> 25
  EXPECT_FALSE(moved);
  EXPECT_EQ(gpu->images.load(), 200);
  EXPECT_EQ(fallbacks, 2);
  EXPECT_EQ(logged.size(), 2u);  // one line per distinct halving, not per batch
  EXPECT_NE(report.find("\"gpu_batch_size\":25"), std::string::npos) << report;
  EXPECT_NE(report.find("\"backend\":\"scripted-gpu\""), std::string::npos) << report;
}

TEST_F(Executor, DeviceErrorMovesTheRestToTheCpu) {
  gpu->fail_call = 3;
  EXPECT_EQ(render_scripted(40), expected);
  ASSERT_TRUE(status.is_ok());
  EXPECT_TRUE(moved);
  EXPECT_EQ(gpu->calls.load(), 3);  // never asked again after the failure
  EXPECT_EQ(gpu->images.load(), 80);
  EXPECT_EQ(fallbacks, 1);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("unspecified launch failure"), std::string::npos);
  EXPECT_NE(report.find("\"moved_to_cpu\":true"), std::string::npos);
}

TEST_F(Executor, WithoutFallbackTheErrorStopsTheJob) {
  gpu->fail_call = 2;
  render_scripted(50, ExecMode::kAuto, /*fallback_on_error=*/false);
  EXPECT_EQ(status.code(), Errc::kDeviceError);
  EXPECT_EQ(fallbacks, 0);
}

TEST_F(Executor, ModeGpuNeverRerunsOnTheCpu) {
  gpu->fail_call = 1;
  render_scripted(50, ExecMode::kGpu);
  EXPECT_EQ(status.code(), Errc::kDeviceError);
  EXPECT_FALSE(moved);
}

TEST_F(Executor, OutOfMemoryOnASingleImageGoesToTheCpu) {
  gpu->max_batch = 0;
  EXPECT_EQ(render_scripted(8), expected);
  EXPECT_TRUE(status.is_ok());
  EXPECT_TRUE(moved);
}

TEST_F(Executor, ReportsWhoRanACallAndWhy) {
  gpu->fail_call = 1;
  OpExecutor executor({}, {}, &scripted.registry);
  std::vector<uint8_t> out(64 * 32 * 4);
  const WindowBatch w{series.data(), 1, starts.data(), 4, 50};
  const BatchView v{out.data(), 4, 64, 32, 1, PixelType::kU8, 64 * 32};
  ExecReport report;
  ASSERT_TRUE(executor.run(RenderCall(params, w, v).call(), &report).is_ok());
  EXPECT_EQ(report.backend, "cpu");
  EXPECT_EQ(report.placement, "scripted-gpu supports render");
  EXPECT_NE(report.fallback.find("scripted-gpu: launch failed"), std::string::npos) << report.fallback;
  EXPECT_TRUE(std::equal(out.begin(), out.end(), expected.begin()));
  // Later calls of the same executor go straight to the CPU.
  ASSERT_TRUE(executor.run(RenderCall(params, w, v).call(), &report).is_ok());
  EXPECT_EQ(report.backend, "cpu");
  EXPECT_EQ(report.placement, "moved to the CPU after a GPU error");
  EXPECT_EQ(gpu->calls.load(), 1);
}

// One executor shared by the workers of a job: halvings and the move to the CPU happen once for all of them, and
// every image is right (ThreadSanitizer runs this in `make test`).
TEST_F(Executor, ConcurrentCallsShareWhatFallbacksLearn) {
  gpu->max_batch = 12;
  gpu->fail_call = 9;
  std::mutex log_mutex;
  OpExecutor executor([] {
    ExecOptions o;
    o.gpu_batch_limit = 50;
    return o;
  }(), [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(log_mutex);
    logged.push_back(line);
  }, &scripted.registry);
  std::vector<uint8_t> out(64 * 32 * starts.size());
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      for (int64_t first = w * 50; first < w * 50 + 50; first += 25) {
        const WindowBatch windows{series.data(), 1, starts.data() + first, 25, 50};
        const BatchView view{out.data() + first * 64 * 32, 25, 64, 32, 1, PixelType::kU8, 64 * 32};
        EXPECT_TRUE(executor.run(RenderCall(params, windows, view).call()).is_ok());
      }
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_EQ(out, expected);
  EXPECT_LE(executor.gpu_batch_limit(), 12);
  EXPECT_TRUE(executor.moved_to_cpu());
  EXPECT_EQ(executor.events().size(), logged.size());  // each kind logged once
}

// Halving slices per-image parameters with the images: each warp matrix stays with its image.
TEST(ExecutorSlices, PerImageParametersFollowTheirImages) {
  ScriptedRegistry scripted;
  ScriptedGpu* gpu = scripted.gpu;
  gpu->max_batch = 1;
  std::vector<uint8_t> pixels(6 * 16 * 16 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 7);
  std::vector<ImageView> ins, outs_gpu, outs_cpu;
  std::vector<uint8_t> out_gpu(6 * 8 * 8 * 3), out_cpu(out_gpu.size());
  float matrices[6][6];
  for (int i = 0; i < 6; ++i) {
    ins.push_back(image_view_packed(pixels.data() + i * 768, 16, 16, 3, PixelType::kU8));
    outs_gpu.push_back(image_view_packed(out_gpu.data() + i * 192, 8, 8, 3, PixelType::kU8));
    outs_cpu.push_back(image_view_packed(out_cpu.data() + i * 192, 8, 8, 3, PixelType::kU8));
    const float m[6] = {0.5f, 0.0f, static_cast<float>(i), 0.0f, 0.5f, static_cast<float>(-i)};
    std::copy(m, m + 6, matrices[i]);
  }
  WarpParams params;
  params.matrices = matrices;
  const VarShapeBatchView in{ins.data(), 6, MemorySpace::kHost};
  ExecOptions batches_of_4;
  batches_of_4.gpu_batch_limit = 4;
  OpExecutor executor(batches_of_4, {}, &scripted.registry);
  ASSERT_TRUE(executor.run(OpCall{OpKind::kWarp, &params, in, {outs_gpu.data(), 6, MemorySpace::kHost}}).is_ok());
  ExecOptions cpu;
  cpu.mode = ExecMode::kCpu;
  ASSERT_TRUE(warp_affine(params, in, {outs_cpu.data(), 6, MemorySpace::kHost}, cpu).is_ok());
  EXPECT_EQ(out_gpu, out_cpu);
  EXPECT_EQ(gpu->images.load(), 6);
  EXPECT_EQ(executor.gpu_batch_limit(), 1);
}

// The CPU cannot take device batches, so they stay on the GPU after the job moved its host calls to the CPU.
TEST(ExecutorDeviceBatches, RunOnTheGpuAfterTheJobMovedToTheCpu) {
  ScriptedRegistry scripted;
  scripted.gpu->fail_call = 1;
  std::vector<uint8_t> pixels(4 * 8 * 8 * 3), out(4 * 8 * 8);
  std::vector<ImageView> ins, grays;
  for (int i = 0; i < 4; ++i) {
    ins.push_back(image_view_packed(pixels.data() + i * 192, 8, 8, 3, PixelType::kU8));
    grays.push_back(image_view_packed(out.data() + i * 64, 8, 8, 1, PixelType::kU8));
  }
  ColorParams params;
  params.conversion = ColorConversion::kRgbToGray;
  ExecOptions batches_of_2;
  batches_of_2.gpu_batch_limit = 2;
  OpExecutor executor(batches_of_2, {}, &scripted.registry);
  const OpCall host{OpKind::kColor, &params, {ins.data(), 4, MemorySpace::kHost}, {grays.data(), 4, MemorySpace::kHost}};
  ExecReport report;
  ASSERT_TRUE(executor.run(host, &report).is_ok());
  EXPECT_EQ(report.backend, "cpu");
  ASSERT_TRUE(executor.moved_to_cpu());
  const OpCall device{OpKind::kColor, &params, {ins.data(), 4, MemorySpace::kDevice},
                      {grays.data(), 4, MemorySpace::kDevice}};
  ASSERT_TRUE(executor.run(device, &report).is_ok());
  EXPECT_EQ(report.backend, "scripted-gpu");
  EXPECT_EQ(scripted.gpu->images.load(), 4);  // both chunks of the device call
}

TEST(ExecutorStreams, AStreamPinsThePlacementToItsBackend) {
  ScriptedRegistry scripted;
  auto stream = scripted.gpu->stream_create();
  ASSERT_TRUE(stream.is_ok());
  std::vector<uint8_t> pixels(8 * 8 * 3), out(8 * 8);
  const ImageView in = image_view_packed(pixels.data(), 8, 8, 3, PixelType::kU8);
  const ImageView gray = image_view_packed(out.data(), 8, 8, 1, PixelType::kU8);
  ColorParams params;
  params.conversion = ColorConversion::kRgbToGray;
  const OpCall call{OpKind::kColor, &params, {&in, 1, MemorySpace::kHost}, {&gray, 1, MemorySpace::kHost}};
  ExecOptions options;
  options.stream = stream.value().get();
  OpExecutor executor(options, {}, &scripted.registry);
  ExecReport report;
  ASSERT_TRUE(executor.run(call, &report).is_ok());
  EXPECT_EQ(report.backend, "scripted-gpu");
  EXPECT_EQ(report.placement, "the call's stream is on scripted-gpu");
  options.mode = ExecMode::kCpu;
  OpExecutor on_cpu(options, {}, &scripted.registry);
  EXPECT_EQ(on_cpu.run(call).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
