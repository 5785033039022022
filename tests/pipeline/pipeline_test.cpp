// Pipeline<T>: stages over bounded queues, ordering, skip/fail policies, quarantine report, cancel, stats.
#include "pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/test_util.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

struct Item {
  int64_t id = 0;
  int64_t value = 0;
};

// A source of `n` items with id = value = 0, 1, ...
std::function<std::optional<Item>()> counting_source(int64_t n) {
  auto next = std::make_shared<int64_t>(0);
  return [next, n]() -> std::optional<Item> {
    if (*next >= n) return std::nullopt;
    const int64_t i = (*next)++;
    return Item{i, i};
  };
}

// A stage that sleeps `pause` on items whose id is a multiple of `every`, so its workers finish out of order.
std::function<Status(Item&)> sleep_every(int64_t every, std::chrono::microseconds pause) {
  return [=](Item& it) {
    if (it.id % every == 0) std::this_thread::sleep_for(pause);
    return Status::ok();
  };
}

TEST(Pipeline, AddStageValidates) {
  Pipeline<Item> p;
  auto ok = [](Item&) { return Status::ok(); };
  EXPECT_EQ(p.add_stage({"", 1, 4}, ok).code(), Errc::kInvalidArgument);
  EXPECT_EQ(p.add_stage({"a", 0, 4}, ok).code(), Errc::kInvalidArgument);
  EXPECT_EQ(p.add_stage({"a", 1, 4}, nullptr).code(), Errc::kInvalidArgument);
  EXPECT_TRUE(p.add_stage({"a", 2, 0}, ok).is_ok());  // capacity 0 -> 1
  EXPECT_EQ(p.stage_count(), 1u);
  EXPECT_EQ(p.in_flight_limit(RunOptions{}), 4 + 2 + 1 + 2);
  EXPECT_EQ(p.run(nullptr, [](Item&&) { return Status::ok(); }).code(), Errc::kInvalidArgument);
}

TEST(Pipeline, OrderedThreeStagesTransformInOrder) {
  Pipeline<Item> p;
  ASSERT_TRUE(p.add_stage({"add", 3, 4}, [](Item& it) {
                 it.value += 10;
                 return Status::ok();
               }).is_ok());
  ASSERT_TRUE(p.add_stage({"mul", 4, 2}, [](Item& it) {
                 if (it.id % 7 == 0) std::this_thread::sleep_for(50us);
                 it.value *= 2;
                 return Status::ok();
               }).is_ok());
  ASSERT_TRUE(p.add_stage({"neg", 2, 3}, [](Item& it) {
                 it.value = -it.value;
                 return Status::ok();
               }).is_ok());
  std::vector<Item> out;
  const Status st = p.run(counting_source(500), [&](Item&& it) {
    out.push_back(it);
    return Status::ok();
  });
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  ASSERT_EQ(out.size(), 500u);
  for (int64_t i = 0; i < 500; ++i) {
    EXPECT_EQ(out[static_cast<size_t>(i)].id, i);
    EXPECT_EQ(out[static_cast<size_t>(i)].value, -(i + 10) * 2);
  }
  const PipelineStats& s = p.stats();
  ASSERT_EQ(s.stages.size(), 5u);
  EXPECT_EQ(s.stages.front().name, "source");
  EXPECT_EQ(s.stages.back().name, "sink");
  for (const StageStats& row : s.stages) EXPECT_EQ(row.items, 500) << row.name;
  EXPECT_EQ(s.produced, 500);
  EXPECT_EQ(s.delivered, 500);
  EXPECT_LE(s.max_reorder, p.in_flight_limit(RunOptions{}));
  EXPECT_EQ(s.find("mul")->workers, 4);
  EXPECT_EQ(s.find("mul")->queue_capacity, 2);
  EXPECT_LE(s.find("mul")->queue_high_water, 2);
  EXPECT_EQ(s.end_to_end.count(), 500);
}

TEST(Pipeline, NoStagesAndEmptySource) {
  Pipeline<Item> p;
  std::vector<int64_t> ids;
  ASSERT_TRUE(p.run(counting_source(20), [&](Item&& it) {
                 ids.push_back(it.id);
                 return Status::ok();
               }).is_ok());
  EXPECT_EQ(ids.size(), 20u);
  ASSERT_TRUE(p.add_stage({"a", 2, 2}, [](Item&) { return Status::ok(); }).is_ok());
  int calls = 0;
  ASSERT_TRUE(p.run(counting_source(0), [&](Item&&) {
                 ++calls;
                 return Status::ok();
               }).is_ok());
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(p.stats().produced, 0);
}

TEST(Pipeline, UnorderedDeliversEveryItemOnce) {
  Pipeline<Item> p;
  ASSERT_TRUE(p.add_stage({"jitter", 4, 4}, sleep_every(3, 100us)).is_ok());
  std::vector<int> seen(300, 0);
  RunOptions options;
  options.ordered = false;
  ASSERT_TRUE(p.run(counting_source(300), [&](Item&& it) {
                 seen[static_cast<size_t>(it.id)]++;
                 return Status::ok();
               }, options).is_ok());
  for (int c : seen) EXPECT_EQ(c, 1);
}

TEST(Pipeline, SkipPolicyQuarantinesAndWritesReport) {
  test::TempDir dir;
  Pipeline<Item> p;
  ASSERT_TRUE(p.add_stage({"decode", 2, 4}, [](Item& it) {
                 if (it.id % 10 == 3) return io_error("truncated \"file\" " + std::to_string(it.id));
                 return Status::ok();
               }).is_ok());
  ASSERT_TRUE(p.add_stage({"encode", 2, 4}, [](Item& it) {
                 if (it.id % 10 == 7) return unsupported_format("bad pixel type");
                 return Status::ok();
               }).is_ok());
  RunOptions options;
  options.on_error = ErrorPolicy::kSkip;
  options.quarantine_path = dir.file("quarantine.jsonl");
  std::vector<int64_t> ids;
  const Status st = p.run(counting_source(100), [&](Item&& it) {
    ids.push_back(it.id);
    return Status::ok();
  }, options);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  ASSERT_EQ(ids.size(), 80u);
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]);
  for (int64_t id : ids) EXPECT_TRUE(id % 10 != 3 && id % 10 != 7);
  EXPECT_EQ(p.stats().quarantined, 20);
  EXPECT_EQ(p.stats().find("decode")->errors, 10);
  EXPECT_EQ(p.stats().find("decode")->items, 90);
  EXPECT_EQ(p.stats().find("encode")->errors, 10);
  EXPECT_EQ(p.stats().find("encode")->items, 80);
  EXPECT_EQ(p.quarantined().size(), 20u);

  std::ifstream file(options.quarantine_path);
  std::string line;
  int lines = 0;
  while (std::getline(file, line)) {
    const auto j = nlohmann::json::parse(line);
    const int64_t id = j.at("id").get<int64_t>();
    const std::string stage = j.at("stage").get<std::string>();
    const std::string error = j.at("error").get<std::string>();
    if (id % 10 == 3) {
      EXPECT_EQ(stage, "decode");
      EXPECT_EQ(error, "IoError: truncated \"file\" " + std::to_string(id));
    } else {
      EXPECT_EQ(id % 10, 7);
      EXPECT_EQ(stage, "encode");
      EXPECT_NE(error.find("bad pixel type"), std::string::npos);
    }
    ++lines;
  }
  EXPECT_EQ(lines, 20);
}

TEST(Pipeline, QuarantinePathThatCannotBeOpenedIsIoError) {
  Pipeline<Item> p;
  RunOptions options;
  options.on_error = ErrorPolicy::kSkip;
  options.quarantine_path = "/nonexistent-dir/q.jsonl";
  EXPECT_EQ(p.run(counting_source(3), [](Item&&) { return Status::ok(); }, options).code(), Errc::kIoError);
}

TEST(Pipeline, FailPolicyDeliversExactPrefixAndStopsSource) {
  Pipeline<Item> p;
  ASSERT_TRUE(p.add_stage({"a", 4, 4}, sleep_every(5, 200us)).is_ok());
  ASSERT_TRUE(p.add_stage({"b", 3, 4}, [](Item& it) {
                 if (it.id == 137 || it.id == 150) return io_error("boom " + std::to_string(it.id));
                 return Status::ok();
               }).is_ok());
  std::atomic<int64_t> produced{0};
  auto src = counting_source(100000);
  std::vector<int64_t> ids;
  const Status st = p.run([&] {
    ++produced;
    return src();
  }, [&](Item&& it) {
    ids.push_back(it.id);
    return Status::ok();
  });
  EXPECT_EQ(st.code(), Errc::kIoError);
  EXPECT_NE(st.message().find("boom 137"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'b'"), std::string::npos) << st.message();
  ASSERT_EQ(ids.size(), 137u);
  for (int64_t i = 0; i < 137; ++i) EXPECT_EQ(ids[static_cast<size_t>(i)], i);
  // The source stopped soon after the failure: at most one reorder window past it.
  EXPECT_LE(produced.load(), 138 + p.in_flight_limit(RunOptions{}));
}

TEST(Pipeline, SinkErrorFailsEvenWithSkipAndSinkIsNotCalledAgain) {
  Pipeline<Item> p;
  ASSERT_TRUE(p.add_stage({"a", 2, 2}, [](Item&) { return Status::ok(); }).is_ok());
  RunOptions options;
  options.on_error = ErrorPolicy::kSkip;
  int calls = 0;
  const Status st = p.run(counting_source(1000), [&](Item&& it) {
    ++calls;
    if (it.id == 42) return io_error("disk full");
    return Status::ok();
  }, options);
  EXPECT_EQ(st.code(), Errc::kIoError);
  EXPECT_NE(st.message().find("sink"), std::string::npos);
  EXPECT_EQ(calls, 43);
  EXPECT_EQ(p.stats().delivered, 42);
}

TEST(Pipeline, CancelFromAnotherThread) {
  Pipeline<Item> p;
  ASSERT_TRUE(p.add_stage({"slow", 2, 4}, [](Item&) {
                 std::this_thread::sleep_for(200us);
                 return Status::ok();
               }).is_ok());
  std::atomic<int64_t> delivered{0};
  std::thread canceller([&] {
    while (delivered.load() < 20) std::this_thread::sleep_for(100us);
    p.cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const Status st = p.run(counting_source(1'000'000), [&](Item&&) {
    ++delivered;
    return Status::ok();
  });
  canceller.join();
  EXPECT_EQ(st.code(), Errc::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_LT(delivered.load(), 1'000'000);
  // The cancel was consumed: the next run completes.
  EXPECT_TRUE(p.run(counting_source(10), [](Item&&) { return Status::ok(); }).is_ok());
}

TEST(Pipeline, CancelBeforeRunAppliesToNextRun) {
  Pipeline<Item> p;
  p.cancel();
  EXPECT_EQ(p.run(counting_source(10), [](Item&&) { return Status::ok(); }).code(), Errc::kCancelled);
  EXPECT_TRUE(p.run(counting_source(10), [](Item&&) { return Status::ok(); }).is_ok());
}

TEST(Pipeline, StatsTableNamesTheSlowStage) {
  Pipeline<Item> p;
  ASSERT_TRUE(p.add_stage({"fast", 2, 4}, [](Item&) { return Status::ok(); }).is_ok());
  ASSERT_TRUE(p.add_stage({"resize_slow", 1, 4}, [](Item&) {
                 std::this_thread::sleep_for(300us);
                 return Status::ok();
               }).is_ok());
  ASSERT_TRUE(p.add_stage({"encode", 2, 4}, [](Item&) { return Status::ok(); }).is_ok());
  ASSERT_TRUE(p.run(counting_source(200), [](Item&&) { return Status::ok(); }).is_ok());
  const PipelineStats& s = p.stats();
  ASSERT_GE(s.bottleneck(), 0);
  EXPECT_EQ(s.stages[static_cast<size_t>(s.bottleneck())].name, "resize_slow");
  const StageStats& slow = *s.find("resize_slow");
  EXPECT_GE(slow.latency.percentile_ns(0.50), 300'000);
  EXPECT_LE(slow.latency.percentile_ns(0.50), slow.latency.percentile_ns(0.95));
  EXPECT_LE(slow.latency.percentile_ns(0.95), slow.latency.percentile_ns(0.99));
  // The slow stage is busy far more than the others; the absolute share drops under CPU
  // contention (the hand-offs wait for a core), so it is only bounded loosely.
  EXPECT_GT(slow.busy_share(s.wall_ns), 0.25);
  for (const char* other : {"fast", "encode"}) {
    EXPECT_GT(slow.busy_share(s.wall_ns), 2 * s.find(other)->busy_share(s.wall_ns)) << other;
  }
  // Upstream of the bottleneck waits on its output queue; downstream waits on its input.
  EXPECT_GT(s.find("fast")->wait_output_ns, s.find("fast")->wait_input_ns);
  EXPECT_GT(s.find("encode")->wait_input_ns, s.find("encode")->wait_output_ns);
  const std::string table = pipeline_stats_table(s);
  EXPECT_NE(table.find("bottleneck: resize_slow"), std::string::npos) << table;
  EXPECT_NE(table.find("p99_ms"), std::string::npos);
  const auto j = nlohmann::json::parse(pipeline_stats_json(s));
  EXPECT_EQ(j.at("bottleneck"), "resize_slow");
  EXPECT_EQ(j.at("stages").size(), 5u);
}

TEST(Pipeline, RunWhileRunningIsRejected) {
  Pipeline<Item> p;
  Status inner;
  ASSERT_TRUE(p.add_stage({"reenter", 1, 1}, [&](Item& it) {
                 if (it.id == 0) inner = p.run(counting_source(1), [](Item&&) { return Status::ok(); });
                 return Status::ok();
               }).is_ok());
  ASSERT_TRUE(p.run(counting_source(3), [](Item&&) { return Status::ok(); }).is_ok());
  EXPECT_EQ(inner.code(), Errc::kInvalidArgument);
  EXPECT_EQ(p.stats().delivered, 3);
}

TEST(Pipeline, MoveOnlySamples) {
  Pipeline<std::unique_ptr<int>> p;
  ASSERT_TRUE(p.add_stage({"inc", 2, 2}, [](std::unique_ptr<int>& v) {
                 ++*v;
                 return Status::ok();
               }).is_ok());
  int n = 0;
  std::vector<int> out;
  ASSERT_TRUE(p.run([&]() -> std::optional<std::unique_ptr<int>> {
                 if (n == 50) return std::nullopt;
                 return std::make_unique<int>(n++);
               }, [&](std::unique_ptr<int>&& v) {
                 out.push_back(*v);
                 return Status::ok();
               }).is_ok());
  ASSERT_EQ(out.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], i + 1);
}

TEST(LatencySamples, PercentilesAndReservoir) {
  LatencySamples l;
  EXPECT_EQ(l.percentile_ns(0.5), 0);
  for (int64_t i = 1; i <= 100; ++i) l.add(i);
  EXPECT_EQ(l.percentile_ns(0.50), 50);
  EXPECT_EQ(l.percentile_ns(0.95), 95);
  EXPECT_EQ(l.percentile_ns(0.99), 99);
  EXPECT_EQ(l.percentile_ns(1.0), 100);
  LatencySamples big;
  for (int64_t i = 0; i < 200000; ++i) big.add(i % 1000);
  EXPECT_EQ(big.count(), 200000);
  EXPECT_EQ(big.stored(), LatencySamples::kCap);
  EXPECT_NEAR(static_cast<double>(big.percentile_ns(0.5)), 500.0, 25.0);
  l.merge(big);
  EXPECT_EQ(l.stored(), LatencySamples::kCap);
  EXPECT_EQ(l.count(), 200100);
}

}  // namespace
}  // namespace kiln
