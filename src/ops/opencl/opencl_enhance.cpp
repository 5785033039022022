#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool enhance_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return false; }

Status enhance_opencl(OpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "opencl: enhance not implemented yet");
}

}  // namespace kiln::opencl
