#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool color_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return false; }

Status color_opencl(OpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "opencl: color not implemented yet");
}

}  // namespace kiln::opencl
