#include "ops/mask.h"

namespace kiln {

Status mask_validate(const OpCall& /*call*/) { return Status(Errc::kNotImplemented, "mask: not implemented yet"); }

}  // namespace kiln
