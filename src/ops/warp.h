// The warp op family, internal side: validation and the per-backend entry points (params in
// include/kiln/ops/warp.h, per-pixel math in warp_px.h).
#pragma once

#include "kiln/ops/warp.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for warp.
Status warp_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status warp_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
