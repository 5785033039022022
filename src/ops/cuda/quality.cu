#include "ops/cuda/cuda_ops.h"

namespace kiln {

bool quality_cuda_supports(const OpCall& /*call*/) { return false; }

Status quality_cuda(CudaOpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "cuda: quality not implemented yet");
}

}  // namespace kiln
