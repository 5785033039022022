// One GPU memory budget for all of a process's sessions (issue 38.12): sessions made with
// "session.use_env_allocators" allocate from the one CUDA arena registered in ONNX Runtime's environment, capped at
// the models' share of GPU_MEMORY_LIMIT_GB. Seen through each session's allocator statistics: the same cap, and one
// session's runs counted in the other's arena. Skips visibly without a CUDA device and provider.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/gpu_required.h"
#include "core/gpu_budget.h"
#include "infer/infer_test_util.h"
#include "infer/ort_env.h"
#include "infer/providers.h"
#include "kiln/infer.h"

namespace kiln {
namespace {

constexpr uint64_t kArenaBytes = uint64_t{768} << 20;

std::unique_ptr<Ort::Session> shared_session(const std::string& path, const BackendOptions& backend) {
  Ort::SessionOptions options;
  options.AddConfigEntry("session.use_env_allocators", "1");
  EXPECT_TRUE(provider_append(options, InferProvider::kCuda, InferOptions{}, backend, nullptr).is_ok());
  return std::make_unique<Ort::Session>(ort_env(), path.c_str(), options);
}

int64_t stat_of(Ort::Session& session, int32_t device, const char* key) {
  const Ort::MemoryInfo memory("Cuda", OrtArenaAllocator, device, OrtMemTypeDefault);
  const Ort::Allocator allocator(session, memory);
  const char* value = allocator.GetStats().GetValue(key);
  return value != nullptr ? std::stoll(value) : -1;
}

TEST(GpuBudget, APoolQuarterAndTheRestForTheModels) {
  const GpuBudget b = gpu_budget_split(uint64_t{8} << 30);
  EXPECT_EQ(b.pool_bytes, uint64_t{2} << 30);
  EXPECT_EQ(b.models_bytes, uint64_t{6} << 30);
  EXPECT_EQ(gpu_budget_split(1001).pool_bytes + gpu_budget_split(1001).models_bytes, 1001u);
  EXPECT_EQ(gpu_budget_split(0).models_bytes, 0u);  // no limit set: none
}

TEST(SharedCudaArena, TwoSessionsAllocateFromOneCappedArena) {
  if (!test::cuda_device_present()) KILN_GPU_SKIP("no CUDA device: the shared CUDA arena needs one");
  const auto providers = onnxruntime_info().providers;
  if (std::find(providers.begin(), providers.end(), "CUDAExecutionProvider") == providers.end()) {
    KILN_GPU_SKIP("this ONNX Runtime has no CUDA provider: configure with -DKILN_ORT_GPU=ON");
  }
  auto options = BackendRegistry::instance().options();
  ASSERT_TRUE(options.is_ok());
  const int32_t device = options.value().device_id;
  ASSERT_TRUE(ort_cuda_arena_share(device, kArenaBytes).is_ok());
  const PackagedModel embed = test::packaged_model_require("fr-embed");
  const PackagedModel detect = test::packaged_model_require("fr-detect");
  auto a = shared_session(embed.file, options.value());
  auto b = shared_session(detect.file, options.value());
  EXPECT_EQ(stat_of(*a, device, "Limit"), static_cast<int64_t>(kArenaBytes));
  EXPECT_EQ(stat_of(*b, device, "Limit"), static_cast<int64_t>(kArenaBytes));
  const int64_t before = stat_of(*b, device, "NumAllocs");
  std::vector<int64_t> shape;
  std::vector<float> input = test::model_input_make(embed, test::photos_decode(), &shape);
  const Ort::MemoryInfo cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  Ort::Value tensor = Ort::Value::CreateTensor<float>(cpu, input.data(), input.size(), shape.data(), shape.size());
  const std::string in = a->GetInputNameAllocated(0, Ort::AllocatorWithDefaultOptions()).get();
  const std::string out = a->GetOutputNameAllocated(0, Ort::AllocatorWithDefaultOptions()).get();
  const char* in_names[] = {in.c_str()};
  const char* out_names[] = {out.c_str()};
  a->Run(Ort::RunOptions{nullptr}, in_names, &tensor, 1, out_names, 1);
  EXPECT_GT(stat_of(*b, device, "NumAllocs"), before) << "the embedder's run is not in the detector's arena";
}

}  // namespace
}  // namespace kiln
