// The mask op family, internal side: validation, the parameters every backend's kernels get, the host-side
// largest-component filter and the per-backend entry points (params in include/kiln/ops/mask.h, per-pixel math in
// mask_px.h).
#pragma once

#include "kiln/ops/mask.h"
#include "ops/mask_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for mask.
Status mask_validate(const OpCall& call);
// The kernels' parameters for a validated call (activation resolved for its channel count; the sigmoid threshold
// as the smallest float logit whose sigmoid is >= threshold, computed in double).
KilnMaskParams mask_params_resolve(const MaskParams& params, int32_t channels);
// The smallest float l with sigmoid(l) >= t, i.e. l >= log(t / (1 - t)), for t in (0, 1).
float mask_logit_threshold(float t);
// Keeps the largest 8-connected component of non-zero pixels of a u8 1-channel host image (ties: the component
// whose first pixel comes first in raster order); every other pixel becomes 0. No-op on an all-zero image.
void mask_largest_component(const ImageView& mask);
// The CPU implementation (the reference every other backend is compared with).
Status mask_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
