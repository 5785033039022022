// quality_score (the predecessor's weights) and quality_judge (thresholds and reasons).
#include <gtest/gtest.h>

#include "kiln/image_ops.h"
#include "kiln/ops/quality.h"

namespace kiln {
namespace {

TEST(QualityScore, Formula) {
  // Each term at half its weight: blur 0.25, brightness 0.20, contrast 0.20, sharpness 0.25, occlusion 0.10.
  EXPECT_DOUBLE_EQ(quality_score({.blur = 500, .brightness = 64, .contrast = 25, .sharpness = 50, .occlusion = 0.5}),
                   0.5);
  EXPECT_DOUBLE_EQ(quality_score({.blur = 5000, .brightness = 128, .contrast = 80, .sharpness = 300}), 1.0);
}

TEST(QualityJudge, PassesGoodImage) {
  QualityMetrics m{.blur = 300, .brightness = 120, .contrast = 40, .sharpness = 150};
  m.score = quality_score(m);
  const QualityVerdict v = quality_judge(m, QualityThresholds{});
  EXPECT_TRUE(v.pass);
  EXPECT_TRUE(v.reasons.empty());
}

TEST(QualityJudge, Reasons) {
  QualityMetrics m{.blur = 85.24, .brightness = 230.06, .contrast = 10, .sharpness = 99.95};
  const QualityVerdict v = quality_judge(m, QualityThresholds{});
  EXPECT_FALSE(v.pass);
  ASSERT_EQ(v.reasons.size(), 3u);
  EXPECT_EQ(v.reasons[0], "blur 85.2 < 120");
  EXPECT_EQ(v.reasons[1], "brightness 230.1 > 225");
  EXPECT_EQ(v.reasons[2], "sharpness 100.0 < 100");

  m.brightness = 12.5;
  QualityThresholds t;
  t.min_contrast = 20;
  t.min_score = 0.9;
  m.score = 0.4;
  const QualityVerdict w = quality_judge(m, t);
  ASSERT_EQ(w.reasons.size(), 5u);
  EXPECT_EQ(w.reasons[1], "brightness 12.5 < 30");
  EXPECT_EQ(w.reasons[3], "contrast 10.0 < 20");
  EXPECT_EQ(w.reasons[4], "score 0.4 < 0.9");
}

}  // namespace
}  // namespace kiln
