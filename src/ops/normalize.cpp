#include "ops/normalize.h"

namespace kiln {

Status normalize_validate(const OpCall& /*call*/) { return Status(Errc::kNotImplemented, "normalize: not implemented yet"); }

}  // namespace kiln
