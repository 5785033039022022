// The enhance op family, internal side: validation and the per-backend entry points (params in
// include/kiln/ops/enhance.h, per-pixel math in enhance_px.h).
#pragma once

#include "kiln/ops/enhance.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for enhance.
Status enhance_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status enhance_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
