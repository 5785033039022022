#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool mask_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return false; }

Status mask_opencl(OpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "opencl: mask not implemented yet");
}

}  // namespace kiln::opencl
