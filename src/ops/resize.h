// The resize op family, internal side: validation and the per-backend entry points (params in
// include/kiln/ops/resize.h, per-pixel math in resize_px.h).
#pragma once

#include "kiln/ops/resize.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for resize.
Status resize_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status resize_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
