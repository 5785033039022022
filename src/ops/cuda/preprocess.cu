#include "ops/cuda/cuda_ops.h"

namespace kiln {

bool preprocess_cuda_supports(const OpCall& /*call*/) { return false; }

Status preprocess_cuda(CudaOpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "cuda: preprocess not implemented yet");
}

}  // namespace kiln
