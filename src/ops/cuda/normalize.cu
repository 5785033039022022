#include "ops/cuda/cuda_ops.h"

namespace kiln {

bool normalize_cuda_supports(const OpCall& /*call*/) { return false; }

Status normalize_cuda(CudaOpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "cuda: normalize not implemented yet");
}

}  // namespace kiln
