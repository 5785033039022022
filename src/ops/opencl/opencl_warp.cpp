#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool warp_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return false; }

Status warp_opencl(OpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "opencl: warp not implemented yet");
}

}  // namespace kiln::opencl
