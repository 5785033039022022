#include "ops/enhance.h"

namespace kiln {

Status enhance_validate(const OpCall& /*call*/) { return Status(Errc::kNotImplemented, "enhance: not implemented yet"); }

}  // namespace kiln
