#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool preprocess_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return false; }

Status preprocess_opencl(OpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "opencl: preprocess not implemented yet");
}

}  // namespace kiln::opencl
