#include "ops/warp.h"

namespace kiln {

Status warp_validate(const OpCall& /*call*/) { return Status(Errc::kNotImplemented, "warp: not implemented yet"); }

}  // namespace kiln
