#include "ops/cuda/cuda_ops.h"

namespace kiln {

bool resize_cuda_supports(const OpCall& /*call*/) { return false; }

Status resize_cuda(CudaOpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "cuda: resize not implemented yet");
}

}  // namespace kiln
