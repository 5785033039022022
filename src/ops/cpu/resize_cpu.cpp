#include "ops/resize.h"

namespace kiln {

Status resize_cpu(const OpCall& /*call*/, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, "resize: not implemented yet");
}

}  // namespace kiln
