#include "ops/mask.h"

namespace kiln {

Status mask_cpu(const OpCall& /*call*/, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, "mask: not implemented yet");
}

}  // namespace kiln
