#include "ops/cuda/cuda_ops.h"

namespace kiln {

bool enhance_cuda_supports(const OpCall& /*call*/) { return false; }

Status enhance_cuda(CudaOpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "cuda: enhance not implemented yet");
}

}  // namespace kiln
