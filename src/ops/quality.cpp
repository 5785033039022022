#include "ops/quality.h"

namespace kiln {

Status quality_validate(const OpCall& /*call*/) { return Status(Errc::kNotImplemented, "quality: not implemented yet"); }

}  // namespace kiln
