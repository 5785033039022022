// The matte op family, internal side: validation, the parameters every backend's kernels get and the per-backend
// entry points (params in include/kiln/ops/matte.h, per-pixel math in matte_px.h).
#pragma once

#include <vector>

#include "kiln/ops/matte.h"
#include "ops/matte_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for matte.
Status matte_validate(const OpCall& call);
// The kernels' parameters of validated params.
KilnMatteParams matte_params_resolve(const MatteParams& params);

// The person pixels of host mattes (kiln_matte_person), into call.results when it is given: the CPU and OpenCL count
// their outputs once written (CUDA counts in its kernel, for device outputs too).
int64_t matte_person_count(const ImageView& matte, const KilnMatteParams& params);
void matte_person_counts(const OpCall& call, const KilnMatteParams& params);

// kiln_matte_tap for every output position along one axis (the CPU's tables; kiln segment samples its arrays and
// IoU with them too).
struct MatteTaps {
  std::vector<int32_t> i0, i1;
  std::vector<float> w;
};
MatteTaps matte_taps_make(int32_t out_size, float start, float extent, int32_t in_size);
// The CPU implementation (the reference every other backend is compared with).
Status matte_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
