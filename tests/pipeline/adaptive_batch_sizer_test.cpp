// Adaptive batch sizer: deterministic given observations, driven by synthetic cost models.
#include "pipeline/adaptive_batch_sizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace kiln {
namespace {

constexpr int64_t kMs = 1'000'000;

AdaptiveBatchSizer make_sizer(const AdaptiveBatchSizerConfig& config) {
  auto created = AdaptiveBatchSizer::create(config);
  EXPECT_TRUE(created.is_ok()) << created.status().to_string();
  return std::move(created).value();
}

// Feeds `windows` full windows at the sizer's current size; returns the size after each window.
std::vector<int32_t> run(AdaptiveBatchSizer& sizer, int windows, const std::function<int64_t(int32_t)>& latency_ns) {
  std::vector<int32_t> sizes;
  for (int w = 0; w < windows; ++w) {
    const int32_t size = sizer.batch_size();
    for (int i = 0; i < sizer.config().window; ++i) sizer.observe(size, latency_ns(size));
    sizes.push_back(sizer.batch_size());
  }
  return sizes;
}

AdaptiveBatchSizerConfig latency_config() {
  AdaptiveBatchSizerConfig config;
  config.profile = SizerProfile::kLatency;
  config.min_batch_size = 1;
  config.max_batch_size = 64;
  config.initial_batch_size = 1;
  config.target_p99_ns = 50 * kMs;
  config.window = 16;
  config.ceiling_ttl_windows = 1000;
  return config;
}

// The throughput profile, otherwise the defaults: sizes 1 to 64 from 1, candidates the powers of two and the max.
AdaptiveBatchSizerConfig throughput_config(int32_t window, int32_t remeasure_windows) {
  AdaptiveBatchSizerConfig config;
  config.profile = SizerProfile::kThroughput;
  config.window = window;
  config.remeasure_windows = remeasure_windows;
  return config;
}

TEST(AdaptiveBatchSizerTest, ConfigValidation) {
  AdaptiveBatchSizerConfig config;
  config.min_batch_size = 0;
  EXPECT_EQ(AdaptiveBatchSizer::create(config).status().code(), Errc::kInvalidArgument);
  config = {};
  config.max_batch_size = 4;
  config.initial_batch_size = 8;
  EXPECT_EQ(AdaptiveBatchSizer::create(config).status().code(), Errc::kInvalidArgument);
  config = {};
  config.candidate_sizes = {128};
  EXPECT_EQ(AdaptiveBatchSizer::create(config).status().code(), Errc::kInvalidArgument);
  AdaptiveBatchSizer fallback;  // valid default state
  EXPECT_EQ(fallback.batch_size(), 1);
}

TEST(AdaptiveBatchSizerTest, LatencyGrowsToLargestSizeUnderTarget) {
  AdaptiveBatchSizer sizer = make_sizer(latency_config());
  auto linear = [](int32_t s) { return 2 * kMs + s * kMs; };  // 48 -> exactly 50 ms
  std::vector<int32_t> sizes = run(sizer, 30, linear);
  for (size_t i = 1; i < sizes.size(); ++i) EXPECT_LE(sizes[i], 49) << "window " << i;
  EXPECT_EQ(sizes.back(), 48);
  EXPECT_EQ(sizer.batch_size(), 48);
  // It stays there.
  std::vector<int32_t> later = run(sizer, 10, linear);
  for (int32_t s : later) EXPECT_EQ(s, 48);
}

TEST(AdaptiveBatchSizerTest, LatencyShrinksWhenP99ExceedsTarget) {
  AdaptiveBatchSizer sizer = make_sizer(latency_config());
  run(sizer, 30, [](int32_t s) { return 2 * kMs + s * kMs; });
  ASSERT_EQ(sizer.batch_size(), 48);
  auto slower = [](int32_t s) { return 2 * kMs + 4 * s * kMs; };  // now 12 -> 50 ms
  std::vector<int32_t> sizes = run(sizer, 20, slower);
  EXPECT_LT(sizes.front(), 48);
  EXPECT_EQ(sizes.back(), 12);
  EXPECT_LE(slower(sizer.batch_size()), 50 * kMs);
}

TEST(AdaptiveBatchSizerTest, LatencyUsesTheTailNotTheMean) {
  AdaptiveBatchSizerConfig config = latency_config();
  config.initial_batch_size = 32;
  config.window = 100;
  AdaptiveBatchSizer sizer = make_sizer(config);
  // 98 fast batches and 2 at 80 ms: the p99 (99th of 100) is 80 ms, the mean is small.
  for (int i = 0; i < 98; ++i) sizer.observe(32, 10 * kMs);
  for (int i = 0; i < 2; ++i) sizer.observe(32, 80 * kMs);
  EXPECT_LT(sizer.batch_size(), 32);
  EXPECT_DOUBLE_EQ(sizer.last_window_metric(), static_cast<double>(80 * kMs));
  // One outlier in 100 is beyond the p99: it grows.
  AdaptiveBatchSizer other = make_sizer(config);
  for (int i = 0; i < 99; ++i) other.observe(32, 10 * kMs);
  other.observe(32, 80 * kMs);
  EXPECT_GT(other.batch_size(), 32);
}

TEST(AdaptiveBatchSizerTest, MemoryPressureHalves) {
  AdaptiveBatchSizer sizer = make_sizer(latency_config());
  auto linear = [](int32_t s) { return 2 * kMs + s * kMs; };
  run(sizer, 30, linear);
  ASSERT_EQ(sizer.batch_size(), 48);
  sizer.on_memory_pressure();
  EXPECT_EQ(sizer.batch_size(), 24);
  sizer.on_memory_pressure();
  EXPECT_EQ(sizer.batch_size(), 12);
  // It may grow again, but not back to the size that hit the pressure (until the ceiling ages out).
  for (int32_t s : run(sizer, 10, linear)) EXPECT_LT(s, 24);
  AdaptiveBatchSizerConfig small = latency_config();
  AdaptiveBatchSizer one = make_sizer(small);
  one.on_memory_pressure();
  EXPECT_EQ(one.batch_size(), 1);  // never below min
}

TEST(AdaptiveBatchSizerTest, CeilingAgesOutSoTheSizerReexplores) {
  AdaptiveBatchSizerConfig config = latency_config();
  config.ceiling_ttl_windows = 4;
  AdaptiveBatchSizer sizer = make_sizer(config);
  auto linear = [](int32_t s) { return 2 * kMs + s * kMs; };
  run(sizer, 30, linear);
  sizer.on_memory_pressure();
  ASSERT_EQ(sizer.batch_size(), 24);
  std::vector<int32_t> sizes = run(sizer, 30, linear);
  EXPECT_GE(*std::max_element(sizes.begin(), sizes.end()), 48);
}

TEST(AdaptiveBatchSizerTest, ThroughputSettlesOnBestSizeOfCostModel) {
  AdaptiveBatchSizer sizer = make_sizer(throughput_config(8, 20));
  EXPECT_EQ(sizer.candidates(), (std::vector<int32_t>{1, 2, 4, 8, 16, 32, 64}));
  // 5 ms fixed cost + 1 ms/item; beyond 16 items the batch spills (+3 ms per extra item).
  auto spill = [](int32_t s) { return 5 * kMs + s * kMs + (s > 16 ? 3 * (s - 16) * kMs : 0); };
  std::vector<int32_t> sizes = run(sizer, 200, spill);
  int at_best = 0;
  for (size_t i = 100; i < sizes.size(); ++i) at_best += sizes[i] == 16;
  EXPECT_GE(at_best, 80) << "mostly at the best size, with periodic re-measurement of neighbours";
  for (size_t i = 100; i < sizes.size(); ++i) EXPECT_TRUE(sizes[i] == 8 || sizes[i] == 16 || sizes[i] == 32);
  EXPECT_GT(sizer.last_window_metric(), 0.0);
}

TEST(AdaptiveBatchSizerTest, ThroughputClimbsToMaxWhenBiggerIsAlwaysBetter) {
  AdaptiveBatchSizerConfig config = throughput_config(4, 1000);
  config.max_batch_size = 48;
  AdaptiveBatchSizer sizer = make_sizer(config);
  EXPECT_EQ(sizer.candidates().back(), 48);
  run(sizer, 40, [](int32_t s) { return 10 * kMs + s * kMs; });
  EXPECT_EQ(sizer.batch_size(), 48);
  sizer.on_memory_pressure();
  EXPECT_EQ(sizer.batch_size(), 16);  // half is 24, snapped down to a candidate
}

TEST(AdaptiveBatchSizerTest, DeterministicGivenObservations) {
  AdaptiveBatchSizerConfig config;
  config.profile = SizerProfile::kThroughput;
  config.window = 5;
  auto model = [](int32_t s) { return 3 * kMs + s * kMs + (s > 8 ? s * s * kMs / 8 : 0); };
  AdaptiveBatchSizer a = make_sizer(config);
  AdaptiveBatchSizer b = make_sizer(config);
  EXPECT_EQ(run(a, 100, model), run(b, 100, model));
  a.reset();
  b.reset();
  EXPECT_EQ(a.batch_size(), config.initial_batch_size);
  EXPECT_EQ(run(a, 100, model), run(b, 100, model));
}

}  // namespace
}  // namespace kiln
