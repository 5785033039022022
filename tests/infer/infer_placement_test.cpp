// Where a model runs: the execution-provider plan, and the GPU providers where a CUDA device exists.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/gpu_required.h"
#include "core/fault.h"
#include "infer/infer_placement.h"
#include "infer/infer_test_util.h"

namespace kiln {
namespace {

BackendRegistry registry_without_gpu() {
  BackendRegistry registry;
  registry.add(nullptr, BackendStatus{BackendKind::kCuda, false, "no CUDA driver"});
  registry.add(cpu_backend_create(), BackendStatus{BackendKind::kCpu, true, "always available"});
  return registry;
}

BackendRegistry registry_with_cuda_status() {
  BackendRegistry registry;
  registry.add(nullptr, BackendStatus{BackendKind::kCuda, true, "ok"});
  registry.add(cpu_backend_create(), BackendStatus{BackendKind::kCpu, true, "always available"});
  return registry;
}

TEST(InferPlan, ModeCpuUsesTheCpuProvider) {
  InferOptions options;
  options.mode = ExecMode::kCpu;
  const auto plan = infer_plan(options, registry_with_cuda_status());
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan.value().providers, std::vector<InferProvider>{InferProvider::kCpu});
}

TEST(InferPlan, WithoutACudaDeviceAutoRunsOnTheCpuAndSaysWhy) {
  const auto plan = infer_plan(InferOptions{}, registry_without_gpu());
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan.value().providers, std::vector<InferProvider>{InferProvider::kCpu});
  EXPECT_NE(plan.value().reason.find("no CUDA driver"), std::string::npos) << plan.value().reason;
  InferOptions gpu;
  gpu.mode = ExecMode::kGpu;
  const auto refused = infer_plan(gpu, registry_without_gpu());
  EXPECT_EQ(refused.status().code(), Errc::kDeviceError);
  EXPECT_NE(refused.status().message().find("no CUDA driver"), std::string::npos);
}

TEST(InferPlan, OpenClMeansTheCpuProviderReportedAsSuch) {
  InferOptions options;
  options.gpu_only = BackendKind::kOpenCL;
  const auto plan = infer_plan(options, registry_with_cuda_status());
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan.value().providers, std::vector<InferProvider>{InferProvider::kCpu});
  EXPECT_NE(plan.value().reason.find("no OpenCL execution provider"), std::string::npos);
}

TEST(InferPlan, WithACudaDeviceTheGpuProvidersComeFirst) {
  InferOptions options;
  options.gpu_provider = InferProvider::kTensorRt;
  auto plan = infer_plan(options, registry_with_cuda_status());
  ASSERT_TRUE(plan.is_ok());
  EXPECT_EQ(plan.value().providers,
            (std::vector<InferProvider>{InferProvider::kTensorRt, InferProvider::kCuda, InferProvider::kCpu}));
  options.mode = ExecMode::kGpu;
  plan = infer_plan(options, registry_with_cuda_status());
  EXPECT_EQ(plan.value().providers, (std::vector<InferProvider>{InferProvider::kTensorRt, InferProvider::kCuda}));
}

TEST(InferSessionPlacement, ModeGpuWithoutADeviceIsAnError) {
  if (test::cuda_device_present()) GTEST_SKIP() << "a CUDA device is present";
  const PackagedModel model = test::packaged_model_require("fr-embed");
  InferOptions options;
  options.mode = ExecMode::kGpu;
  auto session = InferSession::open(model.file, options);
  EXPECT_EQ(session.status().code(), Errc::kDeviceError);
}

TEST(InferSessionPlacement, ProvidersAreListedWithReasons) {
  const auto statuses = infer_provider_statuses();
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_TRUE(statuses[0].available);
  for (const auto& s : statuses) EXPECT_FALSE(s.reason.empty()) << infer_provider_name(s.provider);
  EXPECT_FALSE(onnxruntime_info().version.empty());
}

// The GPU providers themselves: on a machine with a CUDA device and kiln configured with KILN_ORT_GPU=ON.
class InferOnCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::cuda_device_present()) {
      KILN_GPU_SKIP("no CUDA device: the CUDA/TensorRT execution-provider tests need one");
    }
    const auto providers = onnxruntime_info().providers;
    if (std::find(providers.begin(), providers.end(), "CUDAExecutionProvider") == providers.end()) {
      KILN_GPU_SKIP("this ONNX Runtime has no CUDA provider: configure with -DKILN_ORT_GPU=ON");
    }
    model = test::packaged_model_require("fr-embed");
    input = test::model_input_make(model, test::photos_decode(), &shape);
    auto cpu = InferSession::open(model.file, test::cpu_infer_options());
    ASSERT_TRUE(cpu.is_ok());
    ASSERT_TRUE(cpu.value()->run(input, shape, &cpu_outputs).is_ok());
  }
  PackagedModel model;
  std::vector<int64_t> shape;
  std::vector<float> input;
  std::vector<Tensor> cpu_outputs;
};

TEST_F(InferOnCuda, CudaProviderMatchesTheCpuProvider) {
  InferOptions options;
  options.mode = ExecMode::kGpu;
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  EXPECT_EQ(session.value()->report().provider, "cuda");
  std::vector<Tensor> outputs;
  ASSERT_TRUE(session.value()->run(input, shape, &outputs).is_ok());
  test::expect_rows_close(outputs[0], cpu_outputs[0], shape[0]);
}

TEST_F(InferOnCuda, InjectedProviderFailureFallsBackToTheCpuWithIdenticalOutput) {
  InferOptions options;
  options.threads = test::cpu_infer_options().threads;  // the reference's threads: the same sums in the same order
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok());
  ASSERT_EQ(session.value()->report().provider, "cuda");
  ASSERT_TRUE(fault_configure("provider:1").is_ok());
  std::vector<Tensor> outputs;
  const Status st = session.value()->run(input, shape, &outputs);
  ASSERT_TRUE(fault_configure("").is_ok());
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  const InferReport report = session.value()->report();
  EXPECT_EQ(report.provider, "cpu");
  ASSERT_EQ(report.fallbacks.size(), 1u);
  EXPECT_NE(report.fallbacks[0].find("injected"), std::string::npos);
  EXPECT_EQ(outputs[0].data, cpu_outputs[0].data);
}

TEST_F(InferOnCuda, TensorRtWithoutTensorRtFallsBackAndSaysSo) {
  InferOptions options;
  options.gpu_provider = InferProvider::kTensorRt;
  auto session = InferSession::open(model.file, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const InferReport report = session.value()->report();
  if (report.provider == "tensorrt") GTEST_SKIP() << "TensorRT is installed here";
  EXPECT_EQ(report.provider, "cuda");
  ASSERT_FALSE(report.fallbacks.empty());
  EXPECT_NE(report.fallbacks[0].find("tensorrt"), std::string::npos) << report.fallbacks[0];
}

}  // namespace
}  // namespace kiln
