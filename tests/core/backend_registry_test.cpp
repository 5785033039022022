// The registry: CPU is always registered and last, unavailable backends keep their reason; modes parse.
#include <gtest/gtest.h>

#include "core/buffer_pool.h"
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
  EXPECT_EQ(registry.find(BackendKind::kOpenCL)->name(), "fake-gpu");
  EXPECT_EQ(registry.find(BackendKind::kCpu), &registry.cpu());
  EXPECT_EQ(registry.find(BackendKind::kCuda), nullptr);
  ASSERT_NE(registry.status(BackendKind::kCuda), nullptr);
  EXPECT_EQ(registry.status(BackendKind::kCuda)->reason, "no CUDA device");
  EXPECT_TRUE(registry.status(BackendKind::kOpenCL)->available);
}

TEST(BackendRegistry, AKindNeverTriedHasNoStatus) {
  BackendRegistry registry;
  registry.add(cpu_backend_create(), {BackendKind::kCpu, true, "always"});
  EXPECT_EQ(registry.status(BackendKind::kCuda), nullptr);
  EXPECT_EQ(registry.find(BackendKind::kCuda), nullptr);
}

TEST(BackendRegistry, TheCpusHostMemoryIsReused) {
  const auto cpu = cpu_backend_create();
  auto first = cpu->host_acquire(3 << 20);
  ASSERT_TRUE(first.is_ok());
  EXPECT_GE(first->bytes, size_t{3} << 20);
  EXPECT_EQ(first->handle % 64, 0u) << "aligned for vector loads";
  const PoolBlock block = first.value();
  cpu->host_release(block);
  auto again = cpu->host_acquire((3 << 20) - 100);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->handle, block.handle) << "a released block of the same size class comes back";
  auto other = cpu->host_acquire(3 << 20);
  ASSERT_TRUE(other.is_ok());
  EXPECT_NE(other->handle, block.handle) << "a block in use is not handed out twice";
  cpu->host_release(again.value());
  cpu->host_release(other.value());
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
