// series_demo(): determinism, fixed values and OHLC invariants.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/apps/render.h"

namespace kiln {
namespace {

// FNV-1a over the bytes of the values (little-endian float32).
uint64_t fnv1a(const std::vector<float>& values) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const float v : values) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof(bits));
    for (int b = 0; b < 4; ++b) {
      h ^= (bits >> (8 * b)) & 0xFF;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

void expect_row(const Series& s, int64_t i, float open, float high, float low, float close) {
  const float* r = s.row(i);
  EXPECT_EQ(r[kOpen], open) << "row " << i;
  EXPECT_EQ(r[kHigh], high) << "row " << i;
  EXPECT_EQ(r[kLow], low) << "row " << i;
  EXPECT_EQ(r[kClose], close) << "row " << i;
}

TEST(SeriesDemo, ShapeAndNames) {
  const Series s = series_demo(250);
  EXPECT_EQ(s.rows, 250);
  EXPECT_EQ(s.channels, 4);
  EXPECT_EQ(s.values.size(), 1000u);
  EXPECT_EQ(s.source, "demo");
  EXPECT_EQ(s.column, "Open,High,Low,Close");
  EXPECT_EQ(s.line_channel(), kClose);

  const Series none = series_demo(0);
  EXPECT_EQ(none.rows, 0);
  EXPECT_TRUE(none.values.empty());
}

TEST(SeriesDemo, SameSeedSameValues) {
  const Series a = series_demo(5000, 42);
  const Series b = series_demo(5000, 42);
  ASSERT_EQ(a.values.size(), b.values.size());
  EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)), 0);
  // A prefix of a longer run is the shorter run.
  const Series c = series_demo(100, 42);
  EXPECT_EQ(std::memcmp(a.values.data(), c.values.data(), c.values.size() * sizeof(float)), 0);
  // Another seed gives another walk.
  const Series d = series_demo(5000, 43);
  EXPECT_NE(std::memcmp(a.values.data(), d.values.data(), a.values.size() * sizeof(float)), 0);
}

// Constants computed once (and cross-checked with an independent Python port of the same generator).
TEST(SeriesDemo, FixedValues) {
  const Series s = series_demo(1000);
  expect_row(s, 0, 0x1.900000p+6f, 0x1.92298cp+6f, 0x1.85fd56p+6f, 0x1.8757bep+6f);
  expect_row(s, 1, 0x1.8757bep+6f, 0x1.88f7f8p+6f, 0x1.8627e4p+6f, 0x1.86f500p+6f);
  expect_row(s, 2, 0x1.86f500p+6f, 0x1.8914fep+6f, 0x1.83420ep+6f, 0x1.842948p+6f);
  expect_row(s, 999, 0x1.0282e2p+6f, 0x1.02d49cp+6f, 0x1.00dae8p+6f, 0x1.01d6b4p+6f);
  EXPECT_EQ(fnv1a(s.values), 0x925dfd6d91518249ull);

  const Series t = series_demo(5, 7);
  expect_row(t, 0, 0x1.900000p+6f, 0x1.95e926p+6f, 0x1.8da536p+6f, 0x1.93e048p+6f);
  expect_row(t, 4, 0x1.8a0926p+6f, 0x1.8aa484p+6f, 0x1.824e5ap+6f, 0x1.8363cap+6f);
}

TEST(SeriesDemo, OhlcInvariants) {
  const Series s = series_demo(100000);
  EXPECT_EQ(s.row(0)[kOpen], 100.0f);
  double sum = 0;
  double sum_sq = 0;
  for (int64_t i = 0; i < s.rows; ++i) {
    const float* r = s.row(i);
    for (int c = 0; c < 4; ++c) ASSERT_TRUE(std::isfinite(r[c]) && r[c] > 0) << "row " << i;
    ASSERT_GE(r[kHigh], std::max(r[kOpen], r[kClose])) << "row " << i;
    ASSERT_LE(r[kLow], std::min(r[kOpen], r[kClose])) << "row " << i;
    if (i > 0) {
      ASSERT_EQ(r[kOpen], s.row(i - 1)[kClose]) << "row " << i;
    }
    const double ret = std::log(static_cast<double>(r[kClose]) / r[kOpen]);
    sum += ret;
    sum_sq += ret * ret;
  }
  // Log returns have mean ~0 and standard deviation ~0.01 (sigma); bounds are ~5 standard errors wide.
  const double n = static_cast<double>(s.rows);
  const double mean = sum / n;
  const double stddev = std::sqrt(sum_sq / n - mean * mean);
  EXPECT_LT(std::abs(mean), 0.00016);
  EXPECT_NEAR(stddev, 0.01, 0.0002);
}

}  // namespace
}  // namespace kiln
