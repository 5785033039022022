#include "ops/preprocess.h"

namespace kiln {

Status preprocess_validate(const OpCall& /*call*/) { return Status(Errc::kNotImplemented, "preprocess: not implemented yet"); }

}  // namespace kiln
