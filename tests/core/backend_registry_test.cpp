// The registry: CPU is always registered and last, unavailable backends keep their reason; modes parse.
#include <gtest/gtest.h>

#include "kiln/device.h"

namespace kiln {
namespace {

class FakeGpu final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kOpenCL; }
  std::string name() const override { return "fake-gpu"; }
  bool is_gpu() const override { return true; }
  std::vector<DeviceInfo> devices() const override { return {}; }
  bool supports(const OpCall&) const override { return true; }
  Status run(const OpCall&, const RunContext&) override { return Status::ok(); }
};

TEST(BackendRegistry, CpuStaysLast) {
  BackendRegistry registry;
  registry.add(cpu_backend_create(), {BackendKind::kCpu, true, "always"});
  registry.add(std::make_unique<FakeGpu>(), {BackendKind::kOpenCL, true, "fake"});
  registry.add(nullptr, {BackendKind::kCuda, false, "no CUDA device"});
  ASSERT_EQ(registry.backends().size(), 2u);
  EXPECT_EQ(registry.backends().back()->kind(), BackendKind::kCpu);
  EXPECT_EQ(registry.cpu().name(), "cpu");
  EXPECT_EQ(registry.statuses().size(), 3u);
}

TEST(BackendRegistry, DefaultStreamsBelongToTheirBackend) {
  FakeGpu gpu;
  auto stream = gpu.stream_create();
  ASSERT_TRUE(stream.is_ok());
  EXPECT_EQ(&stream.value()->backend(), &gpu);
  EXPECT_TRUE(stream.value()->synchronize().is_ok());
}

TEST(BackendRegistry, ProcessRegistryExplainsMissingGpus) {
  const auto& registry = BackendRegistry::instance();
  EXPECT_EQ(registry.backends().back()->kind(), BackendKind::kCpu);
  for (const auto& status : registry.statuses()) {
    if (!status.available) {
      EXPECT_FALSE(status.reason.empty());
    }
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
