// Temporal smoothing: unsure pixels are held, sure ones follow the new frame at once.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "apps/segment/mask_temporal.h"
#include "kiln/image_ops.h"
#include "ops/probability_px.h"

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

// One map of w x h through the probability op on the CPU into `state`.
Status probability_op(std::vector<float> values, int32_t w, int32_t h, const ProbabilityParams& p,
                      std::vector<float>* state) {
  state->resize(static_cast<size_t>(w) * h);
  const ImageView iv = image_view_packed(values.data(), w, h, 1, PixelType::kF32);
  const ImageView ov = image_view_packed(state->data(), w, h, 1, PixelType::kF32);
  const VarShapeBatch ib = VarShapeBatch::wrap({iv}), ob = VarShapeBatch::wrap({ov});
  ExecOptions cpu;
  cpu.mode = ExecMode::kCpu;
  return probability_maps(p, ib.view(), ob.view(), cpu);
}

// The probability op smoothing its maps on the CPU gives the bits of kiln segment's host smoothing (the op's own
// backends are compared with its CPU in tests/backend_ops/probability_parity_test.cpp).
TEST(MaskTemporal, TheProbabilityOpSmoothsToTheSameBits) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-6.0f, 6.0f);
  const int32_t w = 64, h = 48;
  std::vector<float> state_op, state_host(static_cast<size_t>(w) * h, 0.0f);
  ProbabilityParams p;
  ASSERT_TRUE(probability_op(std::vector<float>(state_host.size(), 0.0f), w, h, p, &state_op).is_ok());
  state_host = state_op;
  p.temporal = 0.7f;
  for (int frame = 0; frame < 5; ++frame) {
    std::vector<float> logits(state_host.size());
    for (float& v : logits) v = u(rng);
    ASSERT_TRUE(probability_op(logits, w, h, p, &state_op).is_ok());
    std::vector<float> prob(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) prob[i] = kiln_prob_of_value(logits[i], 1);
    mask_temporal_smooth(prob.data(), state_host.data(), prob.size(), p.temporal);
    ASSERT_EQ(state_op, state_host) << "frame " << frame;
  }
}

}  // namespace
}  // namespace kiln
