#include "ops/normalize.h"

namespace kiln {

Status normalize_cpu(const OpCall& /*call*/, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, "normalize: not implemented yet");
}

}  // namespace kiln
