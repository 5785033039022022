// Which execution providers a session tries, in order, and why: the inference side of kiln's placement.
#pragma once

#include <string>
#include <vector>

#include "kiln/infer.h"

namespace kiln {

struct InferPlan {
  std::vector<InferProvider> providers;  // tried in order; ends with the CPU provider unless mode is gpu
  std::string reason;                    // why the first one
};

// mode cpu: the CPU provider. GPU_BACKEND=opencl: the CPU provider (ONNX Runtime has no OpenCL provider), said so.
// Otherwise, with a CUDA device in the registry: tensorrt (when asked for), cuda, then the CPU unless mode is gpu;
// without one: the CPU in mode auto, DeviceError naming the reason in mode gpu.
Result<InferPlan> infer_plan(const InferOptions& options, const BackendRegistry& registry);

}  // namespace kiln
