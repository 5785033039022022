// Temporal smoothing: unsure pixels are held, sure ones follow the new frame at once.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "apps/segment/mask_temporal.h"

namespace kiln {
namespace {

TEST(MaskTemporal, UncertaintyIsSquaredEntropy) {
  EXPECT_FLOAT_EQ(mask_uncertainty(0.5f), 1.0f);
  EXPECT_FLOAT_EQ(mask_uncertainty(0.0f), 0.0f);
  EXPECT_FLOAT_EQ(mask_uncertainty(1.0f), 0.0f);
  const float p = 0.9f;
  const float h = -(p * std::log2(p) + (1 - p) * std::log2(1 - p));
  EXPECT_NEAR(mask_uncertainty(p), h * h, 1e-6);
  EXPECT_NEAR(mask_uncertainty(0.1f), mask_uncertainty(0.9f), 1e-6);  // symmetric
}

TEST(MaskTemporal, SureValuesFollowUnsureValuesAreHeld) {
  std::vector<float> state = {0.0f, 1.0f, 0.9f, 0.2f};
  const std::vector<float> current = {1.0f, 0.0f, 0.5f, 0.2f};
  mask_temporal_smooth(current.data(), state.data(), state.size(), 0.7f);
  EXPECT_FLOAT_EQ(state[0], 1.0f);  // certain: no lag
  EXPECT_FLOAT_EQ(state[1], 0.0f);
  EXPECT_NEAR(state[2], 0.5f + (0.9f - 0.5f) * 0.7f, 2e-3f);  // p = 0.5: fully uncertain, 70 % of the old value
  EXPECT_NEAR(state[3], 0.2f, 1e-6);                          // unchanged value stays
}

TEST(MaskTemporal, RatioZeroCopiesAndNanBecomesBackground) {
  std::vector<float> state = {0.3f, 0.3f};
  const std::vector<float> current = {0.6f, std::nanf("")};
  mask_temporal_smooth(current.data(), state.data(), 1, 0.0f);
  EXPECT_FLOAT_EQ(state[0], 0.6f);
  state = {0.3f, 0.3f};
  mask_temporal_smooth(current.data(), state.data(), 2, 0.5f);
  EXPECT_FLOAT_EQ(state[1], 0.0f);
}

// A pixel that alternates around the threshold (the flicker the smoothing is for) varies far less after it.
TEST(MaskTemporal, ReducesFlicker) {
  float state = 0.45f;
  float raw_swing = 0, smooth_swing = 0, previous = state;
  for (int i = 0; i < 40; ++i) {
    const float p = (i % 2 == 0) ? 0.58f : 0.42f;
    mask_temporal_smooth(&p, &state, 1, 0.7f);
    raw_swing += 0.16f;
    smooth_swing += std::abs(state - previous);
    previous = state;
  }
  EXPECT_LT(smooth_swing, raw_swing * 0.5f);
}

}  // namespace
}  // namespace kiln
