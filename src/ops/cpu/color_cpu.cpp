#include "ops/color.h"

namespace kiln {

Status color_cpu(const OpCall& /*call*/, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, "color: not implemented yet");
}

}  // namespace kiln
