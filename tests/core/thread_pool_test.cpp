#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <time.h>
#include <utility>
#include <vector>

#include "core/thread_pool.h"

namespace kiln {
namespace {

TEST(ThreadPool, ParallelForVisitsEveryIndexOnce) {
  ThreadPool pool(3);
  for (int64_t n : {0, 1, 2, 7, 1000, 12345}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
    });
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, UsesSeveralThreads) {
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<std::thread::id> ids;
  pool.parallel_for(64, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> lock(mutex);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_GE(ids.size(), 2u);
}

TEST(ThreadPool, MinBlockKeepsSmallWorkOnTheCallerAndBlocksAtLeastThatBig) {
  ThreadPool pool(4);
  for (int64_t n : {1, 99, 100, 250, 1000}) {
    std::mutex mutex;
    std::set<std::thread::id> ids;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    int64_t smallest = n;
    pool.parallel_for(
        n,
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
          std::lock_guard<std::mutex> lock(mutex);
          ids.insert(std::this_thread::get_id());
          if (end < n) smallest = std::min(smallest, end - begin);  // the last block may be shorter
        },
        100);
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1) << n;
    if (n < 200) {
      EXPECT_EQ(ids, std::set<std::thread::id>{std::this_thread::get_id()}) << n;
    }
    EXPECT_GE(smallest, std::min<int64_t>(n, 100)) << n;
  }
  EXPECT_EQ(ThreadPool::min_rows(336), 196);  // a 112 x 112 RGB image stays on one thread
  EXPECT_EQ(ThreadPool::min_rows(1536), 43);
}

TEST(ThreadPool, WithoutAPoolTheCallerRunsTheWholeRangeOnce) {
  std::vector<std::pair<int64_t, int64_t>> calls;
  const auto record = [&](int64_t begin, int64_t end) { calls.emplace_back(begin, end); };
  parallel_for(nullptr, 0, record);
  EXPECT_TRUE(calls.empty());
  parallel_for(nullptr, 37, record, 4);
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, 37}}));

  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(1000);
  parallel_for(&pool, 1000, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
  });
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPool, SubmittedTasksRunBeforeDestruction) {
  std::atomic<int> count{0};
  {
    ThreadPool pool(2);
    for (int i = 0; i < 100; ++i) pool.submit([&] { count++; });
  }
  EXPECT_EQ(count.load(), 100);
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Workers and callers poll for a while before they sleep; an idle pool must then be asleep, not spinning.
TEST(ThreadPool, IdlePoolSleeps) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(3000, [&](int64_t begin, int64_t end) { sum += end - begin; });
  ASSERT_EQ(sum.load(), 3000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past any polling window
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.05) << "an idle pool used " << used << " s of CPU in 0.2 s";
}

// The caller waits for the work, not for its helper tasks to start: with every worker busy elsewhere (as on a host
// whose cores ONNX Runtime fills) it does the blocks itself and returns. It used to wait until a worker was free to
// run a helper that then found nothing left (kiln segment's per-frame matte: milliseconds per frame on 16 cores).
TEST(ThreadPool, ParallelForDoesNotWaitForBusyWorkers) {
  ThreadPool pool(2);
  std::atomic<bool> release{false};
  std::atomic<int> busy{0};
  for (int i = 0; i < 2; ++i) {
    pool.submit([&] {
      ++busy;
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  }
  while (busy.load() < 2) std::this_thread::yield();
  std::thread releaser([&] {  // the workers are free again after 500 ms, whatever happens
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    release = true;
  });
  std::atomic<int64_t> sum{0};
  const auto begin = std::chrono::steady_clock::now();
  pool.parallel_for(1000, [&](int64_t b, int64_t e) { sum += e - b; });
  const auto waited = std::chrono::steady_clock::now() - begin;
  releaser.join();
  EXPECT_EQ(sum.load(), 1000);
  EXPECT_LT(waited, std::chrono::milliseconds(100));
}

// Many small calls in a row, each finding the workers still polling from the previous one.
TEST(ThreadPool, BackToBackCallsEachCompleteBeforeReturning) {
  ThreadPool pool(2);
  std::vector<int64_t> values(64);
  for (int round = 0; round < 2000; ++round) {
    pool.parallel_for(static_cast<int64_t>(values.size()), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) values[static_cast<size_t>(i)] += i;
    });
  }
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], 2000 * static_cast<int64_t>(i)) << i;
}

}  // namespace
}  // namespace kiln
