#include "ops/cuda/cuda_ops.h"

namespace kiln {

bool color_cuda_supports(const OpCall& /*call*/) { return false; }

Status color_cuda(CudaOpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "cuda: color not implemented yet");
}

}  // namespace kiln
