#include "ops/resize.h"

namespace kiln {

Status resize_validate(const OpCall& /*call*/) { return Status(Errc::kNotImplemented, "resize: not implemented yet"); }

}  // namespace kiln
