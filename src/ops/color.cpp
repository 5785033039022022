#include "ops/color.h"

namespace kiln {

Status color_validate(const OpCall& /*call*/) { return Status(Errc::kNotImplemented, "color: not implemented yet"); }

}  // namespace kiln
