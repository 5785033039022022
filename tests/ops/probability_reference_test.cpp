// probability on the CPU (the reference): sigmoid, softmax and plain values against libm's formulas, NaN and inf,
// channels of CHW and HWC outputs, the deterministic log2 and validation (kiln segment's host smoothing against the
// op: tests/apps/segment/mask_temporal_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "common/image_ops_util.h"
#include "kiln/image_ops.h"
#include "ops/probability.h"

namespace kiln {
namespace {

// One map of w x h from `values` (C channels in `layout`) into `state` (its previous smoothed map when temporal > 0).
Status probability_of(std::vector<float> values, int32_t w, int32_t h, int32_t c, Layout layout,
                      const ProbabilityParams& p, std::vector<float>* state) {
  state->resize(static_cast<size_t>(w) * h);
  const ImageView iv = image_view_packed(values.data(), w, h, c, PixelType::kF32, layout);
  const ImageView ov = image_view_packed(state->data(), w, h, 1, PixelType::kF32);
  const VarShapeBatch ib = VarShapeBatch::wrap({iv}), ob = VarShapeBatch::wrap({ov});
  return probability_maps(p, ib.view(), ob.view(), test::cpu_exec());
}

TEST(ProbabilityCpu, ActivationsFollowTheirFormulas) {
  const std::vector<float> logits = {-60.0f, -3.0f, -0.5f, 0.0f, 0.25f, 2.0f, 7.5f, 60.0f};
  std::vector<float> got;
  ProbabilityParams p;
  ASSERT_TRUE(probability_of(logits, 8, 1, 1, Layout::kHWC, p, &got).is_ok());
  for (size_t i = 0; i < logits.size(); ++i) {
    const double l = std::clamp(logits[i], -50.0f, 50.0f);
    EXPECT_NEAR(got[i], 1.0 / (1.0 + std::exp(-l)), 2e-7) << logits[i];
  }
  p.activation = ProbabilityActivation::kNone;
  ASSERT_TRUE(probability_of({-0.5f, 0.0f, 0.3f, 1.0f, 1.5f}, 5, 1, 1, Layout::kHWC, p, &got).is_ok());
  EXPECT_EQ(got, (std::vector<float>{0.0f, 0.0f, 0.3f, 1.0f, 1.0f}));
}

TEST(ProbabilityCpu, SoftmaxOfTheChannelInEitherLayout) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  const int32_t w = 5, h = 3, c = 4;
  std::vector<float> chw(static_cast<size_t>(w) * h * c);
  for (float& v : chw) v = u(rng);
  std::vector<float> hwc(chw.size());
  for (int32_t k = 0; k < c; ++k) {
    for (int32_t i = 0; i < w * h; ++i) hwc[static_cast<size_t>(i * c + k)] = chw[static_cast<size_t>(k * w * h + i)];
  }
  ProbabilityParams p;
  p.activation = ProbabilityActivation::kSoftmax;
  p.channel = 2;
  std::vector<float> from_chw, from_hwc;
  ASSERT_TRUE(probability_of(chw, w, h, c, Layout::kCHW, p, &from_chw).is_ok());
  ASSERT_TRUE(probability_of(hwc, w, h, c, Layout::kHWC, p, &from_hwc).is_ok());
  EXPECT_EQ(from_chw, from_hwc);
  for (int32_t i = 0; i < w * h; ++i) {
    double sum = 0;
    for (int32_t k = 0; k < c; ++k) sum += std::exp(static_cast<double>(chw[static_cast<size_t>(k * w * h + i)]));
    EXPECT_NEAR(from_chw[static_cast<size_t>(i)], std::exp(chw[static_cast<size_t>(2 * w * h + i)]) / sum, 1e-6) << i;
  }
}

TEST(ProbabilityCpu, NanAndInfAreBackgroundExceptASaturatedLogit) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> got;
  ProbabilityParams p;
  ASSERT_TRUE(probability_of({std::nanf(""), inf, -inf}, 3, 1, 1, Layout::kHWC, p, &got).is_ok());
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[1], 1.0f);  // clamped to 50 first: sigmoid(50) rounds to 1
  EXPECT_LT(got[2], 1e-20f);
  p.activation = ProbabilityActivation::kNone;
  ASSERT_TRUE(probability_of({std::nanf(""), inf, -inf}, 3, 1, 1, Layout::kHWC, p, &got).is_ok());
  EXPECT_EQ(got, (std::vector<float>{0.0f, 0.0f, 0.0f}));
  p.activation = ProbabilityActivation::kSoftmax;
  p.channel = 1;  // channel 0 holds {NaN, 1, 0}, the person's channel 1 {0, inf, inf}
  ASSERT_TRUE(probability_of({std::nanf(""), 1.0f, 0.0f, 0.0f, inf, inf}, 3, 1, 2, Layout::kCHW, p, &got).is_ok());
  EXPECT_EQ(got[0], 0.0f);  // another channel's NaN
  EXPECT_EQ(got[1], 1.0f);  // the person's logit at +inf: its own term is exactly 1, the other's exp(-inf) 0
  EXPECT_EQ(got[2], 1.0f);
}

TEST(ProbabilityCpu, Log2AndUncertaintyAreCloseToLibms) {
  for (float x = 1.0f / 4096; x < 1.0f; x += 1.0f / 512) {
    EXPECT_NEAR(kiln_log2f(x), std::log2(static_cast<double>(x)), 4e-7 * std::max(1.0, std::abs(std::log2(static_cast<double>(x))))) << x;
  }
  EXPECT_EQ(kiln_log2f(0.5f), -1.0f);
  EXPECT_EQ(kiln_prob_uncertainty(0.5f), 1.0f);
  EXPECT_EQ(kiln_prob_uncertainty(0.0f), 0.0f);
  EXPECT_EQ(kiln_prob_uncertainty(1.0f), 0.0f);
  const double q = 0.9;
  const double entropy = -(q * std::log2(q) + (1 - q) * std::log2(1 - q));
  EXPECT_NEAR(kiln_prob_uncertainty(0.9f), entropy * entropy, 1e-6);
}

TEST(ProbabilityCpu, BadCallsAreRefused) {
  std::vector<float> got;
  ProbabilityParams p;
  p.temporal = 1.5f;
  EXPECT_EQ(probability_of({0.0f}, 1, 1, 1, Layout::kHWC, p, &got).code(), Errc::kInvalidArgument);
  p = {};
  p.activation = ProbabilityActivation::kSoftmax;
  EXPECT_EQ(probability_of({0.0f}, 1, 1, 1, Layout::kHWC, p, &got).code(), Errc::kInvalidArgument);
  p = {};
  p.channel = 2;
  const Status st = probability_of({0.0f, 0.0f}, 1, 1, 2, Layout::kCHW, p, &got);
  EXPECT_EQ(st.code(), Errc::kInvalidArgument);
  EXPECT_NE(st.message().find("channel 2"), std::string::npos) << st.message();
  std::vector<float> map(16, 0.0f);  // a map smoothed into itself: kernels would read what others wrote
  const ImageView view = image_view_packed(map.data(), 4, 4, 1, PixelType::kF32);
  const VarShapeBatch same = VarShapeBatch::wrap({view});
  p = {};
  const Status overlap = probability_maps(p, same.view(), same.view(), test::cpu_exec());
  EXPECT_EQ(overlap.code(), Errc::kInvalidArgument);
  EXPECT_NE(overlap.message().find("overlaps"), std::string::npos) << overlap.message();
}

}  // namespace
}  // namespace kiln
