#include "ops/opencl/opencl_ops.h"

namespace kiln::opencl {

bool quality_opencl_supports(const OpCall& /*call*/, const OpenclDevice& /*device*/) { return false; }

Status quality_opencl(OpContext& /*ctx*/, const OpCall& /*call*/) {
  return Status(Errc::kNotImplemented, "opencl: quality not implemented yet");
}

}  // namespace kiln::opencl
