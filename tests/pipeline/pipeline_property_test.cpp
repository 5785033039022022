// Randomized (seeded) properties of Pipeline<T>: no sample lost or duplicated under random stage failures
// and random per-item sleeps; order; fail-policy prefix; prompt cancel; backpressure bound; stats.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/pipeline.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// "s<index>" (appending, not "s" + to_string: GCC 12 warns -Wrestrict on that, a false positive).
std::string stage_name(int64_t index) {
  std::string name = "s";
  name += std::to_string(index);
  return name;
}

struct Sample {
  int64_t id = 0;
  std::vector<int32_t> trail;  // the stages that touched it, in order
};

// One random pipeline shape and its deterministic per-(stage, id) failures and sleeps.
struct Config {
  uint64_t seed = 0;
  int64_t items = 0;
  bool ordered = true;
  std::vector<StageOptions> stages;
  double fail_rate = 0.0;   // per stage per sample
  double sleep_rate = 0.0;  // per stage per sample
  int32_t max_sleep_us = 0;
  size_t sink_capacity = 1;

  uint64_t draw(int32_t stage, int64_t id, uint64_t salt) const {
    return mix(seed ^ mix(static_cast<uint64_t>(stage) * 1000003ull + salt) ^ mix(static_cast<uint64_t>(id)));
  }
  bool fails(int32_t stage, int64_t id) const {
    return static_cast<double>(draw(stage, id, 1) % 1'000'000) < fail_rate * 1e6;
  }
  int32_t sleep_us(int32_t stage, int64_t id) const {
    if (max_sleep_us <= 0 || static_cast<double>(draw(stage, id, 2) % 1'000'000) >= sleep_rate * 1e6) return 0;
    return 1 + static_cast<int32_t>(draw(stage, id, 3) % static_cast<uint64_t>(max_sleep_us));
  }
  // The first stage at which `id` fails, or -1.
  int32_t first_failing_stage(int64_t id) const {
    for (int32_t s = 0; s < static_cast<int32_t>(stages.size()); ++s) {
      if (fails(s, id)) return s;
    }
    return -1;
  }
  RunOptions run_options(ErrorPolicy policy) const {
    RunOptions o;
    o.ordered = ordered;
    o.on_error = policy;
    o.sink_queue_capacity = sink_capacity;
    return o;
  }
};

Config random_config(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Config c;
  c.seed = seed;
  c.items = uniform(0, 150);
  c.ordered = uniform(0, 3) != 0;
  const int stages = uniform(1, 4);
  for (int s = 0; s < stages; ++s) {
    c.stages.push_back(
        StageOptions{stage_name(s), uniform(1, 4), static_cast<size_t>(uniform(1, 5))});
  }
  c.fail_rate = std::uniform_real_distribution<double>(0.0, 0.25)(rng);
  c.sleep_rate = std::uniform_real_distribution<double>(0.0, 0.3)(rng);
  c.max_sleep_us = uniform(0, 40);
  c.sink_capacity = static_cast<size_t>(uniform(1, 4));
  return c;
}

void build(Pipeline<Sample>& p, const Config& c) {
  for (int32_t s = 0; s < static_cast<int32_t>(c.stages.size()); ++s) {
    ASSERT_TRUE(p.add_stage(c.stages[static_cast<size_t>(s)], [&c, s](Sample& x) {
                   x.trail.push_back(s);
                   if (const int32_t us = c.sleep_us(s, x.id); us > 0) std::this_thread::sleep_for(
                       std::chrono::microseconds(us));
                   if (c.fails(s, x.id)) return io_error("injected at s" + std::to_string(s));
                   return Status::ok();
                 }).is_ok());
  }
}

std::function<std::optional<Sample>()> source_of(int64_t n, std::atomic<int64_t>* produced = nullptr) {
  auto next = std::make_shared<int64_t>(0);
  return [next, n, produced]() -> std::optional<Sample> {
    if (*next >= n) return std::nullopt;
    if (produced) ++*produced;
    return Sample{(*next)++, {}};
  };
}

// Skip policy: every id reaches the sink exactly once or is quarantined exactly once, by the stage that
// failed it; order kept when ordered; per-stage item counts chain; queues stay within capacity.
TEST(PipelineProperty, SkipNeverLosesOrDuplicates) {
  for (uint64_t seed = 1; seed <= 250; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Config c = random_config(seed);
    Pipeline<Sample> p;
    build(p, c);
    std::vector<int64_t> delivered;
    const Status st = p.run(source_of(c.items), [&](Sample&& x) {
      for (size_t i = 0; i < x.trail.size(); ++i) EXPECT_EQ(x.trail[i], static_cast<int32_t>(i));
      EXPECT_EQ(x.trail.size(), c.stages.size());
      delivered.push_back(x.id);
      return Status::ok();
    }, c.run_options(ErrorPolicy::kSkip));
    ASSERT_TRUE(st.is_ok()) << st.to_string();

    std::vector<int> reached(static_cast<size_t>(c.items), 0);
    for (size_t i = 0; i < delivered.size(); ++i) {
      ASSERT_GE(delivered[i], 0);
      ASSERT_LT(delivered[i], c.items);
      reached[static_cast<size_t>(delivered[i])]++;
      if (c.ordered && i > 0) {
        ASSERT_LT(delivered[i - 1], delivered[i]);
      }
    }
    for (const QuarantineEntry& q : p.quarantined()) {
      ASSERT_GE(q.id, 0);
      ASSERT_LT(q.id, c.items);
      reached[static_cast<size_t>(q.id)]++;
      EXPECT_EQ(q.stage, stage_name(c.first_failing_stage(q.id)));
      EXPECT_NE(q.error.find("injected"), std::string::npos);
    }
    for (int64_t id = 0; id < c.items; ++id) {
      ASSERT_EQ(reached[static_cast<size_t>(id)], 1) << "id " << id;
    }

    const PipelineStats& s = p.stats();
    ASSERT_EQ(s.stages.size(), c.stages.size() + 2);
    EXPECT_EQ(s.produced, c.items);
    int64_t entering = c.items;
    int64_t errors = 0;
    for (size_t i = 1; i + 1 < s.stages.size(); ++i) {
      const StageStats& row = s.stages[i];
      EXPECT_EQ(row.items + row.errors, entering) << row.name;
      EXPECT_EQ(row.discarded, 0);
      EXPECT_LE(row.queue_high_water, row.queue_capacity);
      EXPECT_EQ(row.queue_capacity, static_cast<int64_t>(c.stages[i - 1].queue_capacity));
      entering = row.items;
      errors += row.errors;
    }
    EXPECT_EQ(s.stages.back().items, entering);
    EXPECT_LE(s.stages.back().queue_high_water, s.stages.back().queue_capacity);
    EXPECT_EQ(s.delivered, static_cast<int64_t>(delivered.size()));
    EXPECT_EQ(s.quarantined, errors);
    EXPECT_EQ(static_cast<int64_t>(p.quarantined().size()), errors);
    EXPECT_LE(s.max_reorder, p.in_flight_limit(c.run_options(ErrorPolicy::kSkip)));
  }
}

// Fail policy: the run returns the error of the lowest failing id F. Ordered: the sink received exactly
// [0, F). Unordered: every id below F exactly once, no failing id, no duplicate.
TEST(PipelineProperty, FailStopsWithFirstErrorAndKeepsPrefix) {
  for (uint64_t seed = 1000; seed < 1150; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Config c = random_config(seed);
    c.fail_rate /= 4;  // let some runs get far
    Pipeline<Sample> p;
    build(p, c);
    int64_t first_fail = c.items;
    for (int64_t id = 0; id < c.items; ++id) {
      if (c.first_failing_stage(id) >= 0) {
        first_fail = id;
        break;
      }
    }
    std::vector<int64_t> delivered;
    const Status st = p.run(source_of(c.items), [&](Sample&& x) {
      delivered.push_back(x.id);
      return Status::ok();
    }, c.run_options(ErrorPolicy::kFail));
    if (first_fail == c.items) {
      ASSERT_TRUE(st.is_ok()) << st.to_string();
      ASSERT_EQ(static_cast<int64_t>(delivered.size()), c.items);
      continue;
    }
    ASSERT_EQ(st.code(), Errc::kIoError);
    const std::string where = "stage 's" + std::to_string(c.first_failing_stage(first_fail)) + "', sample " +
                              std::to_string(first_fail) + ":";
    EXPECT_NE(st.message().find(where), std::string::npos) << st.message() << " vs " << where;
    if (c.ordered) {
      ASSERT_EQ(static_cast<int64_t>(delivered.size()), first_fail);
      for (int64_t i = 0; i < first_fail; ++i) ASSERT_EQ(delivered[static_cast<size_t>(i)], i);
    } else {
      std::vector<int> seen(static_cast<size_t>(c.items), 0);
      for (int64_t id : delivered) {
        ASSERT_EQ(c.first_failing_stage(id), -1) << id;
        ASSERT_EQ(++seen[static_cast<size_t>(id)], 1) << id;
      }
      for (int64_t id = 0; id < first_fail; ++id) ASSERT_EQ(seen[static_cast<size_t>(id)], 1) << id;
    }
    EXPECT_TRUE(p.quarantined().empty());
  }
}

// Cancel under load (endless source, random sleeps) returns kCancelled promptly, without deadlock.
TEST(PipelineProperty, CancelUnderLoadIsPrompt) {
  for (uint64_t seed = 2000; seed < 2040; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Config c = random_config(seed);
    c.fail_rate = 0.0;
    Pipeline<Sample> p;
    build(p, c);
    const auto delay = std::chrono::microseconds(mix(seed) % 3000);
    std::chrono::steady_clock::time_point cancelled_at;
    std::thread canceller([&] {
      std::this_thread::sleep_for(delay);
      cancelled_at = std::chrono::steady_clock::now();
      p.cancel();
    });
    std::vector<int> seen;
    const Status st = p.run(source_of(INT64_MAX), [&](Sample&& x) {
      if (seen.size() <= static_cast<size_t>(x.id)) seen.resize(static_cast<size_t>(x.id) + 1, 0);
      EXPECT_EQ(++seen[static_cast<size_t>(x.id)], 1);
      return Status::ok();
    }, c.run_options(ErrorPolicy::kSkip));
    const auto returned = std::chrono::steady_clock::now();
    canceller.join();
    EXPECT_EQ(st.code(), Errc::kCancelled);
    // Bound: every thread finishes at most one in-flight call (<= 40 us here) after the cancel.
    EXPECT_LT(returned - cancelled_at, 1s);
  }
}

// A slow sink: the samples between source and sink never exceed the configured capacities + workers.
TEST(PipelineProperty, SlowSinkBoundsSamplesInFlight) {
  for (uint64_t seed = 3000; seed < 3030; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Config c = random_config(seed);
    c.fail_rate = 0.0;
    c.items = 120;
    Pipeline<Sample> p;
    build(p, c);
    const RunOptions options = c.run_options(ErrorPolicy::kFail);
    const int64_t limit = p.in_flight_limit(options);
    std::atomic<int64_t> produced{0};
    std::atomic<int64_t> delivered{0};
    int64_t max_in_flight = 0;
    auto inner = source_of(c.items);
    const Status st = p.run([&] {
      auto x = inner();
      if (x) max_in_flight = std::max(max_in_flight, ++produced - delivered.load());
      return x;
    }, [&](Sample&&) {
      std::this_thread::sleep_for(30us);
      ++delivered;
      return Status::ok();
    }, options);
    ASSERT_TRUE(st.is_ok()) << st.to_string();
    EXPECT_EQ(delivered.load(), c.items);
    EXPECT_LE(max_in_flight, limit);
    // The source really was held back (the bound is not vacuous).
    EXPECT_GE(max_in_flight, std::min<int64_t>(limit, c.items) / 2);
    for (const StageStats& row : p.stats().stages) EXPECT_LE(row.queue_high_water, row.queue_capacity) << row.name;
    EXPECT_GT(p.stats().stages.front().wait_output_ns + p.stats().stages.front().wait_input_ns, 0);
  }
}

// Stats: items per stage match; the deliberately slow single-worker stage is the bottleneck.
TEST(PipelineProperty, SlowStageIsTheBottleneck) {
  for (uint64_t seed = 4000; seed < 4012; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const int stages = 2 + static_cast<int>(rng() % 3);
    const int slow = static_cast<int>(rng() % static_cast<uint64_t>(stages));
    Pipeline<Sample> p;
    for (int s = 0; s < stages; ++s) {
      const bool is_slow = s == slow;
      ASSERT_TRUE(p.add_stage({stage_name(s), is_slow ? 1 : 1 + static_cast<int32_t>(rng() % 3),
                               1 + rng() % 4},
                              [is_slow](Sample&) {
                                if (is_slow) std::this_thread::sleep_for(250us);
                                return Status::ok();
                              })
                      .is_ok());
    }
    RunOptions options;
    options.ordered = (rng() % 2) == 0;
    ASSERT_TRUE(p.run(source_of(60), [](Sample&&) { return Status::ok(); }, options).is_ok());
    const PipelineStats& s = p.stats();
    for (const StageStats& row : s.stages) EXPECT_EQ(row.items, 60) << row.name;
    ASSERT_GE(s.bottleneck(), 0);
    EXPECT_EQ(s.stages[static_cast<size_t>(s.bottleneck())].name, stage_name(slow))
        << pipeline_stats_table(s);
    EXPECT_NE(pipeline_stats_table(s).find("bottleneck: s" + std::to_string(slow)), std::string::npos);
  }
}

}  // namespace
}  // namespace kiln
