#include "ops/enhance.h"

namespace kiln {

Status enhance_cpu(const OpCall& /*call*/, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, "enhance: not implemented yet");
}

}  // namespace kiln
