// Profiler recording: disabled cost, nesting, threads, counters, flows, clearing, concurrent snapshots.
#include "profiler/profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "profiler/trace_export.h"

namespace kiln {
namespace {

class ProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override { Profiler::instance().reset(); }
  void TearDown() override { Profiler::instance().reset(); }
};

size_t event_count(const std::vector<ProfileThreadEvents>& threads) {
  size_t n = 0;
  for (const ProfileThreadEvents& thread : threads) n += thread.events.size();
  return n;
}

// The events named `name`, with the tid that recorded each.
std::vector<std::pair<uint32_t, ProfileEvent>> find_events(const std::vector<ProfileThreadEvents>& threads,
                                                           const std::string& name) {
  std::vector<std::pair<uint32_t, ProfileEvent>> out;
  for (const ProfileThreadEvents& thread : threads) {
    for (const ProfileEvent& event : thread.events) {
      if (event.name != nullptr && name == event.name) out.emplace_back(thread.tid, event);
    }
  }
  return out;
}

void spin_ns(int64_t ns) {
  int64_t end = profile_now_ns() + ns;
  while (profile_now_ns() < end) {
  }
}

TEST_F(ProfilerTest, DisabledRecordsNothing) {
  ASSERT_FALSE(Profiler::enabled());
  {
    KILN_PROFILE_SCOPE("outer");
    KILN_PROFILE_SCOPE("inner");
    profile_counter("queue_depth", 3);
    profile_flow_begin("sample", 1);
    profile_flow_end("sample", 1);
  }
  std::vector<ProfileThreadEvents> threads = Profiler::instance().snapshot();
  EXPECT_EQ(find_events(threads, "outer").size(), 0u);
  EXPECT_EQ(find_events(threads, "inner").size(), 0u);
  EXPECT_EQ(find_events(threads, "queue_depth").size(), 0u);
  EXPECT_EQ(find_events(threads, "sample").size(), 0u);
}

TEST_F(ProfilerTest, ScopeStartedWhileDisabledStaysSilent) {
  {
    KILN_PROFILE_SCOPE("late");
    Profiler::instance().enable(true);
  }
  EXPECT_EQ(find_events(Profiler::instance().snapshot(), "late").size(), 0u);
}

TEST_F(ProfilerTest, NestedScopesNest) {
  Profiler::instance().enable(true);
  {
    KILN_PROFILE_SCOPE("outer");
    spin_ns(20'000);
    {
      KILN_PROFILE_SCOPE("inner");
      spin_ns(50'000);
    }
    spin_ns(20'000);
  }
  std::vector<ProfileThreadEvents> threads = Profiler::instance().snapshot();
  auto outer = find_events(threads, "outer");
  auto inner = find_events(threads, "inner");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(outer[0].first, inner[0].first);
  const ProfileEvent& o = outer[0].second;
  const ProfileEvent& i = inner[0].second;
  EXPECT_EQ(o.kind, ProfileEventKind::kComplete);
  EXPECT_GE(i.dur_ns, 50'000);
  EXPECT_GE(o.dur_ns, 90'000);
  EXPECT_GT(i.ts_ns, o.ts_ns);
  EXPECT_LT(i.ts_ns + i.dur_ns, o.ts_ns + o.dur_ns);
}

TEST_F(ProfilerTest, ThreadsGetNamesAndDistinctTids) {
  Profiler::instance().enable(true);
  constexpr int kThreads = 4;
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([t] {
      Profiler::instance().set_thread_name("worker " + std::to_string(t));
      for (int k = 0; k <= t; ++k) {
        KILN_PROFILE_SCOPE("work");
      }
    });
  }
  for (std::thread& w : workers) w.join();

  std::vector<ProfileThreadEvents> threads = Profiler::instance().snapshot();
  std::vector<uint32_t> tids;
  for (int t = 0; t < kThreads; ++t) {
    std::string name = "worker " + std::to_string(t);
    auto it = std::find_if(threads.begin(), threads.end(), [&](const ProfileThreadEvents& th) { return th.name == name; });
    ASSERT_NE(it, threads.end()) << name;
    EXPECT_EQ(it->events.size(), static_cast<size_t>(t + 1));
    EXPECT_GT(it->tid, 0u);
    tids.push_back(it->tid);
  }
  std::sort(tids.begin(), tids.end());
  EXPECT_EQ(std::unique(tids.begin(), tids.end()), tids.end());

  // Exited threads keep their events until clear(), which then drops their buffers.
  Profiler::instance().clear();
  for (const ProfileThreadEvents& thread : Profiler::instance().snapshot()) {
    EXPECT_EQ(thread.name.rfind("worker ", 0), std::string::npos);
    EXPECT_TRUE(thread.events.empty());
  }
}

TEST_F(ProfilerTest, CountersRecordValues) {
  Profiler::instance().enable(true);
  profile_counter("queue_depth", 3);
  profile_counter("queue_depth", 7);
  profile_counter("pool_bytes", 1 << 20);
  std::vector<ProfileThreadEvents> threads = Profiler::instance().snapshot();
  auto depth = find_events(threads, "queue_depth");
  ASSERT_EQ(depth.size(), 2u);
  EXPECT_EQ(depth[0].second.kind, ProfileEventKind::kCounter);
  EXPECT_EQ(depth[0].second.value, 3.0);
  EXPECT_EQ(depth[1].second.value, 7.0);
  EXPECT_LE(depth[0].second.ts_ns, depth[1].second.ts_ns);
  auto bytes = find_events(threads, "pool_bytes");
  ASSERT_EQ(bytes.size(), 1u);
  EXPECT_EQ(bytes[0].second.value, 1048576.0);
}

// On a thread of its own named `thread_name`: for sample ids 100, 101, ..., a `scope` range around flow("sample", id).
void flow_thread(const char* thread_name, const char* scope, void (*flow)(const char*, uint64_t), uint64_t samples) {
  std::thread t([=] {
    Profiler::instance().set_thread_name(thread_name);
    for (uint64_t id = 100; id < 100 + samples; ++id) {
      KILN_PROFILE_SCOPE(scope);
      flow("sample", id);
    }
  });
  t.join();
}

// The flow events of one kind seen for a sample: how many, and the time and thread of the last.
struct FlowSide {
  int count = 0;
  int64_t ts_ns = 0;
  uint32_t tid = 0;
};

TEST_F(ProfilerTest, FlowsPairAcrossThreads) {
  Profiler::instance().enable(true);
  constexpr uint64_t kSamples = 5;
  flow_thread("producer", "produce", profile_flow_begin, kSamples);
  flow_thread("consumer", "consume", profile_flow_end, kSamples);

  auto flows = find_events(Profiler::instance().snapshot(), "sample");
  ASSERT_EQ(flows.size(), 2 * kSamples);
  for (uint64_t id = 100; id < 100 + kSamples; ++id) {
    FlowSide begin;
    FlowSide end;
    for (const auto& [tid, event] : flows) {
      if (event.id != id) continue;
      FlowSide* side = nullptr;
      if (event.kind == ProfileEventKind::kFlowBegin) side = &begin;
      if (event.kind == ProfileEventKind::kFlowEnd) side = &end;
      if (side == nullptr) continue;
      ++side->count;
      side->ts_ns = event.ts_ns;
      side->tid = tid;
    }
    EXPECT_EQ(begin.count, 1) << id;
    EXPECT_EQ(end.count, 1) << id;
    EXPECT_LE(begin.ts_ns, end.ts_ns);
    EXPECT_NE(begin.tid, end.tid);
  }
}

TEST_F(ProfilerTest, ManyEventsSpanChunksAndClear) {
  Profiler::instance().enable(true);
  constexpr int kEvents = 10'000;  // more than two chunks
  for (int i = 0; i < kEvents; ++i) Profiler::instance().record_complete("injected", i, i + 1);
  auto events = find_events(Profiler::instance().snapshot(), "injected");
  ASSERT_EQ(events.size(), static_cast<size_t>(kEvents));
  for (int i = 0; i < kEvents; ++i) ASSERT_EQ(events[i].second.ts_ns, i);

  Profiler::instance().clear();
  EXPECT_EQ(event_count(Profiler::instance().snapshot()), 0u);
  for (int i = 0; i < 5000; ++i) Profiler::instance().record_complete("after", i, i);
  EXPECT_EQ(event_count(Profiler::instance().snapshot()), 5000u);
  EXPECT_EQ(find_events(Profiler::instance().snapshot(), "injected").size(), 0u);
}

TEST_F(ProfilerTest, RecordCompleteClampsNegativeDuration) {
  Profiler::instance().enable(true);
  Profiler::instance().record_complete("backwards", 100, 50);
  auto events = find_events(Profiler::instance().snapshot(), "backwards");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].second.dur_ns, 0);
}

TEST_F(ProfilerTest, InternGivesStablePointers) {
  std::string a = "stage.";
  a += "decode";
  const char* p = profile_intern(a);
  a = "other";
  EXPECT_STREQ(p, "stage.decode");
  EXPECT_EQ(profile_intern("stage.decode"), p);
}

// Recording threads, a snapshotting/exporting thread and clear() all at once (run under TSan too).
TEST_F(ProfilerTest, ConcurrentRecordSnapshotAndClear) {
  Profiler::instance().enable(true);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20'000;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      std::vector<ProfileThreadEvents> threads = Profiler::instance().snapshot();
      (void)threads;
      std::string json = trace_to_json();
      EXPECT_FALSE(json.empty());
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([t] {
      Profiler::instance().set_thread_name("recorder " + std::to_string(t));
      for (int i = 0; i < kPerThread; ++i) {
        KILN_PROFILE_SCOPE("tick");
        if (i % 64 == 0) profile_counter("depth", i);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  done.store(true);
  reader.join();
  EXPECT_EQ(find_events(Profiler::instance().snapshot(), "tick").size(), static_cast<size_t>(kThreads * kPerThread));

  // clear() racing with recorders: afterwards only events recorded after it remain, and nothing breaks.
  Profiler::instance().clear();
  std::vector<std::thread> again;
  for (int t = 0; t < kThreads; ++t) {
    again.emplace_back([] {
      for (int i = 0; i < kPerThread; ++i) {
        KILN_PROFILE_SCOPE("tock");
      }
    });
  }
  for (int k = 0; k < 20; ++k) Profiler::instance().clear();
  for (std::thread& w : again) w.join();
  EXPECT_LE(find_events(Profiler::instance().snapshot(), "tock").size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(find_events(Profiler::instance().snapshot(), "tick").size(), 0u);
}

TEST_F(ProfilerTest, DisabledScopeOverhead) {
  constexpr int kIterations = 1'000'000;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kIterations; ++i) {
    KILN_PROFILE_SCOPE("disabled");
    // Keep the loop from being removed entirely.
    asm volatile("" ::: "memory");
  }
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ profiler ] disabled scope: %.3f ns/scope (%d scopes)\n", static_cast<double>(ns) / kIterations,
              kIterations);

  Profiler::instance().enable(true);
  start = std::chrono::steady_clock::now();
  constexpr int kEnabled = 100'000;
  for (int i = 0; i < kEnabled; ++i) {
    KILN_PROFILE_SCOPE("enabled");
  }
  ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ profiler ] enabled scope: %.3f ns/scope (%d scopes)\n", static_cast<double>(ns) / kEnabled, kEnabled);
  EXPECT_EQ(find_events(Profiler::instance().snapshot(), "disabled").size(), 0u);
  EXPECT_EQ(find_events(Profiler::instance().snapshot(), "enabled").size(), static_cast<size_t>(kEnabled));
}

}  // namespace
}  // namespace kiln
