#include "ops/cuda/cuda_ops.h"

namespace kiln {

bool warp_cuda_supports(const OpCall& /*call*/) { return false; }

Status warp_cuda(CudaOpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "cuda: warp not implemented yet");
}

}  // namespace kiln
