// The blur family, internal side: validation, the kernels' parameters, the small images' shapes and the CPU
// implementation (params in include/kiln/ops/blur.h, per-pixel math in blur_px.h).
#pragma once

#include <vector>

#include "kiln/ops.h"
#include "kiln/ops/blur.h"
#include "ops/blur_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for blur.
Status blur_validate(const OpCall& call);
// The kernels' parameters of validated params.
KilnBlurArgs blur_args_resolve(const BlurParams& params);
// Packed u8 views of the shrunk sizes of `in`'s images (for a backend's temporaries; their pixels point at the
// inputs' and are not read).
std::vector<ImageView> blur_small_shapes(const VarShapeBatchView& in, int32_t factor);
// The CPU implementation (the reference every other backend is compared with).
Status blur_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
