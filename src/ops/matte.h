// The matte op family, internal side: validation, the parameters every backend's kernels get and the per-backend
// entry points (params in include/kiln/ops/matte.h, per-pixel math in matte_px.h).
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "kiln/ops/matte.h"
#include "ops/matte_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for matte.
Status matte_validate(const OpCall& call);
// The kernels' parameters of validated params.
KilnMatteParams matte_params_resolve(const MatteParams& params);

// alpha / 255 for every alpha byte (kiln_matte_blend_unit's weights: the CPU's blends divide nothing per pixel).
const std::array<float, 256>& matte_blend_units();
// A copy of the params whose composite frames and backgrounds start at image `first`.
std::shared_ptr<const void> matte_params_slice(const void* params, int64_t first);

// kiln_px_linear_tap for every output position along one axis (the CPU's tables; kiln segment samples its arrays and
// IoU with them too).
struct MatteTaps {
  std::vector<int32_t> i0, i1;
  std::vector<float> w;
};
MatteTaps matte_taps_make(int32_t out_size, float start, float extent, int32_t in_size);
// The CPU implementation (the reference every other backend is compared with).
Status matte_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
