#include "ops/cuda/cuda_ops.h"

namespace kiln {

bool mask_cuda_supports(const OpCall& /*call*/) { return false; }

Status mask_cuda(CudaOpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "cuda: mask not implemented yet");
}

}  // namespace kiln
