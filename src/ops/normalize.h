// The normalize op family, internal side: validation and the per-backend entry points (params in
// include/kiln/ops/normalize.h, per-pixel math in normalize_px.h).
#pragma once

#include "kiln/ops/normalize.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for normalize.
Status normalize_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status normalize_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
