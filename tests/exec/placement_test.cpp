// Placement: supports() alone decides, modes behave as documented, device batches never land on the CPU.
#include <gtest/gtest.h>

#include "kiln/exec.h"
#include "kiln/ops/render.h"

namespace kiln {
namespace {

class FakeGpu final : public Backend {
 public:
  explicit FakeGpu(bool supports_render) : m_supports(supports_render) {}
  BackendKind kind() const override { return BackendKind::kOpenCL; }
  std::string name() const override { return "fake-gpu"; }
  bool is_gpu() const override { return true; }
  std::vector<DeviceInfo> devices() const override { return {}; }
  bool supports(const OpCall& call) const override { return m_supports && call.op == OpKind::kRender; }
  Status run(const OpCall&, const RunContext&) override { return Status::ok(); }

 private:
  bool m_supports;
};

BackendRegistry registry_with(bool gpu_supports_render) {
  BackendRegistry registry;
  registry.add(cpu_backend_create(), {BackendKind::kCpu, true, "always"});
  registry.add(std::make_unique<FakeGpu>(gpu_supports_render), {BackendKind::kOpenCL, true, "fake"});
  return registry;
}

const RenderParams kParams;
const OpCall kRender{OpKind::kRender, &kParams, {}, {}, nullptr};

TEST(Placement, AutoPrefersASupportingGpu) {
  const BackendRegistry registry = registry_with(true);
  EXPECT_EQ(placement_choose(registry, ExecMode::kAuto, kRender)->backend->name(), "fake-gpu");
  EXPECT_EQ(placement_choose(registry, ExecMode::kGpu, kRender)->backend->name(), "fake-gpu");
  EXPECT_EQ(placement_choose(registry, ExecMode::kCpu, kRender)->backend->name(), "cpu");
  EXPECT_EQ(placement_choose(registry, ExecMode::kAuto, kRender, BackendKind::kCuda)->backend->name(), "cpu");
}

TEST(Placement, UnsupportedOpFallsBackToCpuInAutoAndFailsInGpuMode) {
  const BackendRegistry registry = registry_with(false);
  const auto placed = placement_choose(registry, ExecMode::kAuto, kRender);
  ASSERT_TRUE(placed.is_ok());
  EXPECT_EQ(placed->backend->name(), "cpu");
  EXPECT_NE(placed->reason.find("does not support"), std::string::npos) << placed->reason;
  EXPECT_EQ(placement_choose(registry, ExecMode::kGpu, kRender).status().code(), Errc::kDeviceError);
}

TEST(Placement, DeviceBatchesNeverGoToTheCpu) {
  const BackendRegistry registry = registry_with(false);
  OpCall device = kRender;
  device.in.space = MemorySpace::kDevice;
  EXPECT_EQ(placement_choose(registry, ExecMode::kCpu, device).status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(placement_choose(registry, ExecMode::kAuto, device).status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
