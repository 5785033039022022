#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool resize_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return false; }

Status resize_opencl(OpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "opencl: resize not implemented yet");
}

}  // namespace kiln::opencl
