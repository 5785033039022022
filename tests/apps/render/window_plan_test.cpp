// window_plan(): candidates, non-finite skipping, labels, limits and argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kiln/apps/render.h"

namespace kiln {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Series line_series(std::vector<float> values, std::string source = "prices.csv") {
  Series s;
  s.rows = static_cast<int64_t>(values.size());
  s.channels = 1;
  s.values = std::move(values);
  s.source = std::move(source);
  s.column = "Close";
  return s;
}

// Rows of {open, high, low, close}.
Series ohlc_series(const std::vector<std::vector<float>>& rows) {
  Series s;
  s.channels = 4;
  s.rows = static_cast<int64_t>(rows.size());
  for (const auto& r : rows) s.values.insert(s.values.end(), r.begin(), r.end());
  s.source = "ohlc.csv";
  s.column = "Open,High,Low,Close";
  return s;
}

Series ramp(int64_t n) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(100 + i));
  return line_series(std::move(v));
}

WindowSpec spec_of(int64_t seq_len, int64_t stride = 1) {
  WindowSpec spec;
  spec.seq_len = seq_len;
  spec.stride = stride;
  return spec;
}

TEST(WindowPlan, StartsAtEveryStride) {
  Result<WindowPlan> p = window_plan(ramp(10), spec_of(3, 2));
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->candidates, 4);
  EXPECT_EQ(p->starts, (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_TRUE(p->labels.empty());
  EXPECT_EQ(p->skipped_nonfinite, 0);
  EXPECT_EQ(p->dropped_no_future, 0);

  // seq_len == rows: exactly one window.
  p = window_plan(ramp(10), spec_of(10, 3));
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->candidates, 1);
  EXPECT_EQ(p->starts, (std::vector<int64_t>{0}));

  // Last start + seq_len == rows exactly: 11 rows, seq 3, stride 4 -> 0, 4, 8.
  p = window_plan(ramp(11), spec_of(3, 4));
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->starts, (std::vector<int64_t>{0, 4, 8}));
}

TEST(WindowPlan, SkipsWindowsWithNonFiniteValues) {
  Series s = ramp(10);
  s.values[5] = kNan;
  Result<WindowPlan> p = window_plan(s, spec_of(3));
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->candidates, 8);
  EXPECT_EQ(p->skipped_nonfinite, 3);  // windows 3, 4, 5 hold row 5
  EXPECT_EQ(p->starts, (std::vector<int64_t>{0, 1, 2, 6, 7}));

  s.values[0] = -kInf;
  s.values[9] = kInf;
  p = window_plan(s, spec_of(3));
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->skipped_nonfinite, 5);
  EXPECT_EQ(p->starts, (std::vector<int64_t>{1, 2, 6}));
}

TEST(WindowPlan, OhlcChecksAllChannelsLineOnlyClose) {
  Series s = ohlc_series({{1, 2, 0.5f, 1.5f}, {1.5f, kNan, 1, 1.2f}, {1.2f, 1.3f, 1, 1.1f}, {1.1f, 1.2f, 1, 1.15f}});
  WindowSpec spec = spec_of(2);
  Result<WindowPlan> line = window_plan(s, spec);
  ASSERT_TRUE(line.is_ok());
  EXPECT_EQ(line->starts, (std::vector<int64_t>{0, 1, 2}));  // High is not drawn by a line chart
  EXPECT_EQ(line->skipped_nonfinite, 0);

  spec.ohlc = true;
  Result<WindowPlan> ohlc = window_plan(s, spec);
  ASSERT_TRUE(ohlc.is_ok());
  EXPECT_EQ(ohlc->starts, (std::vector<int64_t>{2}));
  EXPECT_EQ(ohlc->skipped_nonfinite, 2);

  s.values[2 * 4 + kClose] = kNan;  // a Close gap hits line charts too
  spec.ohlc = false;
  line = window_plan(s, spec);
  ASSERT_TRUE(line.is_ok());
  EXPECT_EQ(line->starts, (std::vector<int64_t>{0}));
}

TEST(WindowPlan, TwoClassLabels) {
  // Each window's last close vs the close `horizon` rows later.
  Series s = line_series({100, 101, 100, 100, 99, 102, 103});
  WindowSpec spec = spec_of(2);
  spec.label_horizon = 1;
  Result<WindowPlan> p = window_plan(s, spec);
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->candidates, 6);
  // start 0: 101 -> 100 down; 1: 100 -> 100 flat = not up; 2: 100 -> 99; 3: 99 -> 102 up; 4: 102 -> 103 up;
  // 5: row 7 does not exist.
  EXPECT_EQ(p->starts, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(p->labels, (std::vector<int8_t>{0, 0, 0, 1, 1}));
  EXPECT_EQ(p->dropped_no_future, 1);
  EXPECT_EQ(p->skipped_nonfinite, 0);

  spec.label_horizon = 3;
  p = window_plan(s, spec);
  ASSERT_TRUE(p.is_ok());
  // start 0: 101 -> 99; 1: 100 -> 102; 2: 100 -> 103; 3..5: no future.
  EXPECT_EQ(p->starts, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(p->labels, (std::vector<int8_t>{0, 1, 1}));
  EXPECT_EQ(p->dropped_no_future, 3);
}

TEST(WindowPlan, ThreeClassLabels) {
  Series s = line_series({100, 100, 102, 101, 101.5f, 100, 98});
  WindowSpec spec = spec_of(2);
  spec.label_horizon = 1;
  spec.label_threshold = 0.01;
  Result<WindowPlan> p = window_plan(s, spec);
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  // Returns: 100->102 +2% up; 102->101 -0.98% flat; 101->101.5 +0.5% flat; 101.5->100 -1.48% down;
  // 100->98 -2% down.
  EXPECT_EQ(p->starts, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(p->labels, (std::vector<int8_t>{2, 1, 1, 0, 0}));

  // Threshold 0: any move counts, no move is flat.
  Series flat = line_series({1, 1, 1, 2, 1});
  spec.label_threshold = 0;
  p = window_plan(flat, spec);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->labels, (std::vector<int8_t>{1, 2, 0}));
}

TEST(WindowPlan, NonFiniteFutureAndOrderOfCounting) {
  // Rows: 0..5, NaN at row 3.
  Series s = line_series({1, 2, 3, kNan, 5, 6});
  WindowSpec spec = spec_of(2);
  spec.label_horizon = 2;
  Result<WindowPlan> p = window_plan(s, spec);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->candidates, 5);
  // start 0: rows 0-1 ok, future row 3 NaN -> skipped.
  // start 1: rows 1-2 ok, future row 4 = 5 -> up.
  // start 2, 3: hold row 3 -> skipped (before the future check).
  // start 4: rows 4-5 ok, future row 7 missing -> dropped.
  EXPECT_EQ(p->starts, (std::vector<int64_t>{1}));
  EXPECT_EQ(p->labels, (std::vector<int8_t>{1}));
  EXPECT_EQ(p->skipped_nonfinite, 3);
  EXPECT_EQ(p->dropped_no_future, 1);

  // A bad window near the end counts as non-finite, not as missing its future.
  Series tail = line_series({1, 2, 3, 4, kNan});
  spec.label_horizon = 1;
  p = window_plan(tail, spec);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->candidates, 4);
  EXPECT_EQ(p->starts, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(p->skipped_nonfinite, 2);  // start 2 (future NaN) and start 3 (own NaN)
  EXPECT_EQ(p->dropped_no_future, 0);
}

TEST(WindowPlan, LimitKeepsFirstWindows) {
  Series s = ramp(20);
  s.values[1] = kNan;
  WindowSpec spec = spec_of(3);
  spec.limit = 4;
  Result<WindowPlan> p = window_plan(s, spec);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->starts, (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(p->candidates, 18);
  EXPECT_EQ(p->skipped_nonfinite, 2);

  spec.label_horizon = 1;
  p = window_plan(s, spec);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->starts.size(), 4u);
  EXPECT_EQ(p->labels, (std::vector<int8_t>{1, 1, 1, 1}));
  EXPECT_EQ(p->dropped_no_future, 1);  // counts cover the whole series

  spec.limit = 0;
  p = window_plan(s, spec);
  ASSERT_TRUE(p.is_ok());
  EXPECT_TRUE(p->starts.empty());
  EXPECT_TRUE(p->labels.empty());
  EXPECT_EQ(p->candidates, 18);
}

TEST(WindowPlan, LargeSeriesIsFast) {
  constexpr int64_t kRows = 2'000'000;
  std::vector<float> v(kRows, 1.0f);
  for (int64_t i = 0; i < kRows; i += 1000) v[static_cast<size_t>(i)] = kNan;
  WindowSpec spec = spec_of(500);
  Result<WindowPlan> p = window_plan(line_series(std::move(v)), spec);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->candidates, kRows - 500 + 1);
  // Each block of 1000 rows starting at a NaN at row k*1000 leaves starts k*1000+1 .. k*1000+500.
  EXPECT_EQ(p->starts.front(), 1);
  EXPECT_EQ(static_cast<int64_t>(p->starts.size()) + p->skipped_nonfinite, p->candidates);
  EXPECT_EQ(static_cast<int64_t>(p->starts.size()), 2000 * 500);
}

TEST(WindowPlan, RejectsBadArguments) {
  const Series s = ramp(57);
  struct Case {
    WindowSpec spec;
    std::string message;
  };
  std::vector<Case> cases;
  WindowSpec spec = spec_of(100);
  cases.push_back({spec, "seq_len 100 is longer than the series (57 rows) in prices.csv"});
  spec = spec_of(1);
  cases.push_back({spec, "seq_len must be at least 2 (got 1)"});
  spec = spec_of(5, 0);
  cases.push_back({spec, "stride must be at least 1 (got 0)"});
  spec = spec_of(5);
  spec.label_horizon = -1;
  cases.push_back({spec, "label_horizon must be 0 (no labels) or positive (got -1)"});
  spec = spec_of(5);
  spec.ohlc = true;
  cases.push_back({spec, "OHLC windows need a 4-channel series (Open,High,Low,Close); prices.csv has 1 channel"});
  for (const Case& c : cases) {
    Result<WindowPlan> p = window_plan(s, c.spec);
    ASSERT_FALSE(p.is_ok()) << c.message;
    EXPECT_EQ(p.status().code(), Errc::kInvalidArgument);
    EXPECT_EQ(p.status().message(), c.message);
  }

  Series broken = ramp(10);
  broken.values.pop_back();
  Result<WindowPlan> p = window_plan(broken, spec_of(3));
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), Errc::kInvalidArgument);

  Series empty = line_series({});
  p = window_plan(empty, spec_of(2));
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
