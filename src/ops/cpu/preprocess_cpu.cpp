#include "ops/preprocess.h"

namespace kiln {

Status preprocess_cpu(const OpCall& /*call*/, ThreadPool* /*pool*/) {
  return Status(Errc::kNotImplemented, "preprocess: not implemented yet");
}

}  // namespace kiln
