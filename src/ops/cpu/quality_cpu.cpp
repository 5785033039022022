#include "ops/quality.h"

namespace kiln {

Status quality_cpu(const OpCall& /*call*/, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, "quality: not implemented yet");
}

}  // namespace kiln
