#include "apps/segment/mask_temporal.h"

#include <algorithm>
#include <cmath>

namespace kiln {

float mask_uncertainty(float p) {
  p = std::clamp(p, 0.0f, 1.0f);
  if (p <= 0.0f || p >= 1.0f) return 0.0f;
  const float entropy = -(p * std::log2(p) + (1.0f - p) * std::log2(1.0f - p));
  return entropy * entropy;
}

namespace {

// mask_uncertainty at 4096 steps of p (two log2 per pixel would cost more than the rest of the smoothing).
constexpr int kSteps = 4096;
const float* uncertainty_table() {
  static const auto* table = [] {
    auto* t = new float[kSteps + 1];
    for (int i = 0; i <= kSteps; ++i) t[i] = mask_uncertainty(static_cast<float>(i) / kSteps);
    return t;
  }();
  return table;
}

}  // namespace

void mask_temporal_smooth(const float* current, float* state, size_t count, float ratio) {
  if (ratio <= 0.0f) {
    std::copy(current, current + count, state);
    return;
  }
  const float* table = uncertainty_table();
  for (size_t i = 0; i < count; ++i) {
    const float v = current[i];
    const float p = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;  // NaN -> 0
    const float u = table[static_cast<int>(p * kSteps + 0.5f)];
    state[i] = p + (state[i] - p) * (u * ratio);
  }
}

}  // namespace kiln
