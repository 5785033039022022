// The mask op family, internal side: validation and the per-backend entry points (params in
// include/kiln/ops/mask.h, per-pixel math in mask_px.h).
#pragma once

#include "kiln/ops/mask.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for mask.
Status mask_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status mask_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
