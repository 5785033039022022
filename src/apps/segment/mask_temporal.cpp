#include "apps/segment/mask_temporal.h"

#include <algorithm>

#include "ops/probability.h"

namespace kiln {

float mask_uncertainty(float p) { return kiln_prob_uncertainty(p); }

void mask_temporal_smooth(const float* current, float* state, size_t count, float ratio) {
  if (ratio <= 0.0f) {
    std::copy(current, current + count, state);
    return;
  }
  // The probability op's weights, so a map smoothed here is the bits of one smoothed on a device.
  const float* table = probability_uncertainty_steps();
  for (size_t i = 0; i < count; ++i) {
    const float p = kiln_prob_clean(current[i]);
    state[i] = kiln_prob_smooth(p, state[i], table[kiln_prob_step_of(p)], ratio);
  }
}

}  // namespace kiln
