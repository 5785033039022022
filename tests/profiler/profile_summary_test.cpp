// Summary statistics from injected ranges with known durations.
#include "profiler/profile_summary.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace kiln {
namespace {

constexpr int64_t kMs = 1'000'000;

class ProfileSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Profiler::instance().reset();
    Profiler::instance().enable(true);
  }
  void TearDown() override { Profiler::instance().reset(); }
};

TEST_F(ProfileSummaryTest, StatsFromKnownDurations) {
  Profiler& profiler = Profiler::instance();
  // "decode": 100 calls of 1..100 ms, back to back from t=0 (ends at 5050 ms);
  // "render": 4 calls of 250 ms; "render" overlaps decode (another stage), so wall stays 5050 ms.
  int64_t t = 0;
  for (int d = 1; d <= 100; ++d) {
    profiler.record_complete("decode", t, t + d * kMs);
    t += d * kMs;
  }
  for (int i = 0; i < 4; ++i) profiler.record_complete("render", i * 1000 * kMs, i * 1000 * kMs + 250 * kMs);

  ProfileSummary summary = profile_summarize();
  EXPECT_DOUBLE_EQ(summary.wall_ms, 5050.0);
  ASSERT_EQ(summary.ranges.size(), 2u);
  const ProfileRangeStats& decode = summary.ranges[0];
  EXPECT_EQ(decode.name, "decode");
  EXPECT_EQ(decode.calls, 100);
  EXPECT_DOUBLE_EQ(decode.total_ms, 5050.0);
  EXPECT_DOUBLE_EQ(decode.mean_ms, 50.5);
  EXPECT_DOUBLE_EQ(decode.p95_ms, 95.0);  // nearest rank: the 95th of 100 sorted durations
  EXPECT_DOUBLE_EQ(decode.share_pct, 100.0);
  const ProfileRangeStats& render = summary.ranges[1];
  EXPECT_EQ(render.name, "render");
  EXPECT_EQ(render.calls, 4);
  EXPECT_DOUBLE_EQ(render.total_ms, 1000.0);
  EXPECT_DOUBLE_EQ(render.mean_ms, 250.0);
  EXPECT_DOUBLE_EQ(render.p95_ms, 250.0);
  EXPECT_NEAR(render.share_pct, 100.0 * 1000.0 / 5050.0, 1e-9);
}

TEST_F(ProfileSummaryTest, P95NearestRankSmallCounts) {
  std::vector<ProfileThreadEvents> threads(1);
  auto add = [&](const char* name, int64_t begin, int64_t dur) {
    ProfileEvent e;
    e.name = name;
    e.ts_ns = begin;
    e.dur_ns = dur;
    threads[0].events.push_back(e);
  };
  add("one", 0, 7 * kMs);
  for (int d : {5, 1, 3, 2, 4}) add("five", 10 * kMs, d * kMs);  // 95% of 5 = 4.75 -> 5th -> 5 ms
  for (int d = 1; d <= 20; ++d) add("twenty", 0, d * kMs);      // 95% of 20 = 19 -> 19 ms
  ProfileSummary summary = profile_summarize(threads);
  for (const ProfileRangeStats& r : summary.ranges) {
    if (r.name == "one") {
      EXPECT_DOUBLE_EQ(r.p95_ms, 7.0);
    } else if (r.name == "five") {
      EXPECT_DOUBLE_EQ(r.p95_ms, 5.0);
    } else if (r.name == "twenty") {
      EXPECT_DOUBLE_EQ(r.p95_ms, 19.0);
    }
  }
  EXPECT_DOUBLE_EQ(summary.wall_ms, 20.0);
  ASSERT_EQ(summary.ranges.size(), 3u);
  EXPECT_EQ(summary.ranges[0].name, "twenty");  // 210 ms
  EXPECT_EQ(summary.ranges[1].name, "five");    // 15 ms
  EXPECT_EQ(summary.ranges[2].name, "one");     // 7 ms
}

TEST_F(ProfileSummaryTest, SameNameFromDifferentPointersMerges) {
  std::string dynamic = "stage";
  Profiler::instance().record_complete("stage", 0, kMs);
  Profiler::instance().record_complete(profile_intern(dynamic), kMs, 3 * kMs);
  ProfileSummary summary = profile_summarize();
  ASSERT_EQ(summary.ranges.size(), 1u);
  EXPECT_EQ(summary.ranges[0].calls, 2);
  EXPECT_DOUBLE_EQ(summary.ranges[0].total_ms, 3.0);
}

TEST_F(ProfileSummaryTest, CountersWidenWallButAreNotRanges) {
  Profiler::instance().record_complete("work", 0, 10 * kMs);
  ProfileEvent counter;
  counter.kind = ProfileEventKind::kCounter;
  counter.name = "queue_depth";
  counter.ts_ns = 40 * kMs;
  Profiler::instance().record(counter);
  ProfileSummary summary = profile_summarize();
  EXPECT_DOUBLE_EQ(summary.wall_ms, 40.0);
  ASSERT_EQ(summary.ranges.size(), 1u);
  EXPECT_DOUBLE_EQ(summary.ranges[0].share_pct, 25.0);
}

TEST_F(ProfileSummaryTest, TableListsRangesByTotal) {
  Profiler::instance().record_complete("small", 0, kMs);
  Profiler::instance().record_complete("a_much_longer_range_name", 0, 8 * kMs);
  Profiler::instance().record_complete("a_much_longer_range_name", 0, 2 * kMs);
  std::string table = profile_summary_table();
  std::printf("%s", table.c_str());
  EXPECT_NE(table.find("range"), std::string::npos);
  EXPECT_NE(table.find("calls"), std::string::npos);
  EXPECT_NE(table.find("p95 ms"), std::string::npos);
  EXPECT_NE(table.find("share"), std::string::npos);
  size_t long_pos = table.find("a_much_longer_range_name");
  size_t small_pos = table.find("small");
  ASSERT_NE(long_pos, std::string::npos);
  ASSERT_NE(small_pos, std::string::npos);
  EXPECT_LT(long_pos, small_pos);
  // calls 2, total 10 ms, mean 5 ms, p95 8 ms, share 125% (10 ms of ranges over 8 ms of wall time).
  std::string long_line = table.substr(long_pos, table.find('\n', long_pos) - long_pos);
  EXPECT_NE(long_line.find(" 2 "), std::string::npos) << long_line;
  EXPECT_NE(long_line.find("10.000"), std::string::npos) << long_line;
  EXPECT_NE(long_line.find("5.000"), std::string::npos) << long_line;
  EXPECT_NE(long_line.find("8.000"), std::string::npos) << long_line;
  EXPECT_NE(long_line.find("125.0%"), std::string::npos) << long_line;
}

TEST_F(ProfileSummaryTest, EmptyProfile) {
  ProfileSummary summary = profile_summarize();
  EXPECT_EQ(summary.wall_ms, 0.0);
  EXPECT_TRUE(summary.ranges.empty());
  EXPECT_NE(profile_summary_table().find("0 range names"), std::string::npos);
}

}  // namespace
}  // namespace kiln
