// Placement: supports() alone decides, CPU is always registered and last, modes behave as documented.
#include <gtest/gtest.h>

#include "kiln/device.h"

namespace kiln {
namespace {

class FakeGpu final : public Backend {
 public:
  explicit FakeGpu(bool supports_render) : m_supports(supports_render) {}
  BackendKind kind() const override { return BackendKind::kOpenCL; }
  std::string name() const override { return "fake-gpu"; }
  bool is_gpu() const override { return true; }
  std::vector<DeviceInfo> devices() const override { return {}; }
  bool supports(const OpRequest& request) const override { return m_supports && request.op == OpKind::kRender; }
  Status render(const RenderParams&, const WindowBatch&, const BatchView&, ThreadPool*, RenderTimings*) override {
    return Status::ok();
  }

 private:
  bool m_supports;
};

TEST(BackendRegistry, CpuStaysLastAndAutoPrefersASupportingGpu) {
  BackendRegistry registry;
  registry.add(cpu_backend_create(), {BackendKind::kCpu, true, "always"});
  registry.add(std::make_unique<FakeGpu>(true), {BackendKind::kOpenCL, true, "fake"});
  ASSERT_EQ(registry.backends().size(), 2u);
  EXPECT_EQ(registry.backends().back()->kind(), BackendKind::kCpu);
  RenderParams params;
  const OpRequest request{OpKind::kRender, &params};
  EXPECT_EQ(registry.place(ExecMode::kAuto, request)->backend->name(), "fake-gpu");
  EXPECT_EQ(registry.place(ExecMode::kGpu, request)->backend->name(), "fake-gpu");
  EXPECT_EQ(registry.place(ExecMode::kCpu, request)->backend->name(), "cpu");
}

TEST(BackendRegistry, UnsupportedOpFallsBackToCpuInAutoAndFailsInGpuMode) {
  BackendRegistry registry;
  registry.add(cpu_backend_create(), {BackendKind::kCpu, true, "always"});
  registry.add(std::make_unique<FakeGpu>(false), {BackendKind::kOpenCL, true, "fake"});
  RenderParams params;
  const OpRequest request{OpKind::kRender, &params};
  const auto placed = registry.place(ExecMode::kAuto, request);
  ASSERT_TRUE(placed.is_ok());
  EXPECT_EQ(placed->backend->name(), "cpu");
  EXPECT_NE(placed->reason.find("does not support"), std::string::npos) << placed->reason;
  const auto gpu = registry.place(ExecMode::kGpu, request);
  EXPECT_EQ(gpu.status().code(), Errc::kDeviceError);
}

TEST(BackendRegistry, ProcessRegistryExplainsMissingGpus) {
  const auto& registry = BackendRegistry::instance();
  EXPECT_EQ(registry.backends().back()->kind(), BackendKind::kCpu);
  for (const auto& status : registry.statuses()) {
    if (!status.available) EXPECT_FALSE(status.reason.empty());
  }
  EXPECT_FALSE(registry.cpu().devices().empty());
}

TEST(ExecMode, Parses) {
  EXPECT_EQ(exec_mode_parse("GPU").value(), ExecMode::kGpu);
  EXPECT_EQ(exec_mode_parse("cpu").value(), ExecMode::kCpu);
  EXPECT_EQ(exec_mode_parse("fast").status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
