#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool normalize_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return false; }

Status normalize_opencl(OpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "opencl: normalize not implemented yet");
}

}  // namespace kiln::opencl
