// The quality op family, internal side: validation and the per-backend entry points (params in
// include/kiln/ops/quality.h, per-pixel math in quality_px.h).
#pragma once

#include "kiln/ops/quality.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for quality.
Status quality_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status quality_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
