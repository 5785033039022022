// The color op family, internal side: validation and the per-backend entry points (params in
// include/kiln/ops/color.h, per-pixel math in color_px.h).
#pragma once

#include "kiln/ops/color.h"
#include "ops/image_desc.h"
#include "ops/color_px.h"
#include "ops/image_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for color.
Status color_validate(const OpCall& call);
// The CPU implementation (the reference every other backend is compared with).
Status color_cpu(const OpCall& call, ThreadPool* pool);
// The fixed-point NV12 <-> RGB constants of params' matrix and range (unused by the other conversions).
KilnYuvConsts color_yuv_consts(const ColorParams& params);

// The descriptor of a host image for the _px.h functions (base = image.data, offset 0, the view's strides).

}  // namespace kiln
