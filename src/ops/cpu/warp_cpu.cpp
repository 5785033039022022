#include "ops/warp.h"

namespace kiln {

Status warp_cpu(const OpCall& /*call*/, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, "warp: not implemented yet");
}

}  // namespace kiln
