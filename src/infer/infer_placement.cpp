#include "infer/infer_placement.h"

namespace kiln {

Result<InferPlan> infer_plan(const InferOptions& options, const BackendRegistry& registry) {
  InferPlan plan;
  if (options.mode == ExecMode::kCpu) {
    plan.providers = {InferProvider::kCpu};
    plan.reason = "mode cpu";
    return plan;
  }
  if (options.gpu_only == BackendKind::kOpenCL) {
    plan.providers = {InferProvider::kCpu};
    plan.reason = "GPU_BACKEND=opencl: ONNX Runtime has no OpenCL execution provider, the model runs on the CPU one";
    return plan;
  }
  const BackendStatus* cuda = registry.status(BackendKind::kCuda);
  if (cuda == nullptr || !cuda->available) {
    const std::string why = "no CUDA device for a GPU execution provider (" +
                            (cuda ? cuda->reason : std::string("CUDA backend not compiled")) + ")";
    if (options.mode == ExecMode::kGpu) return Status(Errc::kDeviceError, "mode gpu: " + why);
    plan.providers = {InferProvider::kCpu};
    plan.reason = why;
    return plan;
  }
  if (options.gpu_provider == InferProvider::kTensorRt) plan.providers.push_back(InferProvider::kTensorRt);
  plan.providers.push_back(InferProvider::kCuda);
  if (options.mode != ExecMode::kGpu) plan.providers.push_back(InferProvider::kCpu);
  plan.reason = std::string(infer_provider_name(plan.providers.front())) + " on the CUDA device";
  return plan;
}

}  // namespace kiln
