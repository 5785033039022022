// The color op family, internal side: validation and the per-backend entry points (params in
// include/kiln/ops/color.h, per-pixel math in color_px.h).
#pragma once

#include "kiln/ops/color.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for color.
Status color_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status color_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
