// The probability family, internal side: validation, the parameters every backend's kernels get and the
// per-backend entry points (params in include/kiln/ops/probability.h, per-pixel math in probability_px.h).
#pragma once

#include "kiln/ops/probability.h"
#include "ops/probability_px.h"

namespace kiln {

class ThreadPool;

// InvalidArgument when the call's shapes, types or parameters are wrong for probability.
Status probability_validate(const OpCall& call);
KilnProbabilityParams probability_params_resolve(const ProbabilityParams& params);
// kiln_prob_uncertainty_step of every step 0..KILN_PROB_UNCERTAINTY_STEPS (a table: two log2 per pixel would cost
// more than the rest of the smoothing).
const float* probability_uncertainty_steps();
// The CPU implementation (the reference every other backend is compared with).
Status probability_cpu(const OpCall& call, ThreadPool* pool);

}  // namespace kiln
