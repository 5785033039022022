#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "core/buffer_pool.h"

namespace kiln {
namespace {

struct CountingAllocator {
  int allocs = 0;
  int frees = 0;
  size_t live = 0;
  size_t peak_live = 0;
  bool fail = false;
  BufferPool::AllocateFn allocate() {
    return [this](size_t bytes) -> Result<uintptr_t> {
      if (fail) return Status(Errc::kOutOfMemory, "driver says no");
      ++allocs;
      live += bytes;
      peak_live = std::max(peak_live, live);
      return reinterpret_cast<uintptr_t>(std::malloc(bytes));
    };
  }
  BufferPool::ReleaseFn release() {
    return [this](uintptr_t handle, size_t bytes) {
      ++frees;
      live -= bytes;
      std::free(reinterpret_cast<void*>(handle));
    };
  }
};

TEST(BufferPool, ReusesReleasedBlocksOfTheSameClass) {
  CountingAllocator a;
  BufferPool pool("test", a.allocate(), a.release());
  for (int round = 0; round < 10; ++round) {
    auto x = pool.acquire(3000);
    auto y = pool.acquire(100000);
    ASSERT_TRUE(x.is_ok() && y.is_ok());
    pool.release(*x);
    pool.release(*y);
  }
  EXPECT_EQ(a.allocs, 2);
  const auto stats = pool.stats();
  EXPECT_EQ(stats.allocations, 2u);
  EXPECT_EQ(stats.reuses, 18u);
  EXPECT_EQ(stats.in_use_bytes, 0u);
  EXPECT_EQ(stats.held_bytes, BufferPool::size_class(3000) + BufferPool::size_class(100000));
}

TEST(BufferPool, NeverHoldsMoreThanTheBudget) {
  CountingAllocator a;
  const size_t budget = 8 << 20;
  BufferPool pool("test", a.allocate(), a.release(), budget);
  std::vector<PoolBlock> held;
  for (size_t bytes : {1u << 20, 3u << 20, 2u << 20, 5u << 20, 1u << 20, 6u << 20}) {
    auto block = pool.acquire(bytes);
    if (block.is_ok()) {
      held.push_back(*block);
    } else {
      EXPECT_EQ(block.status().code(), Errc::kOutOfMemory);
      for (auto& b : held) pool.release(b);
      held.clear();
      block = pool.acquire(bytes);  // after releasing, the cache is trimmed to make room
      ASSERT_TRUE(block.is_ok()) << block.status().to_string();
      held.push_back(*block);
    }
    EXPECT_LE(pool.stats().held_bytes, budget);
  }
  EXPECT_LE(pool.stats().peak_held_bytes, budget);
  EXPECT_LE(a.peak_live, budget);
  for (auto& b : held) pool.release(b);  // the pool frees cached blocks only; in-use ones belong to the caller
}

TEST(BufferPool, DriverFailureDropsTheCacheAndReportsOutOfMemory) {
  CountingAllocator a;
  BufferPool pool("gpu", a.allocate(), a.release());
  auto x = pool.acquire(1 << 16);
  ASSERT_TRUE(x.is_ok());
  pool.release(*x);
  a.fail = true;
  auto y = pool.acquire(1 << 20);
  EXPECT_EQ(y.status().code(), Errc::kOutOfMemory);
  EXPECT_EQ(a.frees, 1);  // the cached 64 KiB block was freed before giving up
}

// Raw calls that wait for another thread's acquire and release of the same pool, counted so that a late one of an
// earlier round is not taken for the next's; every wait gives up after 5 s.
struct RawCallWitness {
  std::mutex mutex;
  std::condition_variable changed;
  int raw_calls = 0;
  int others_done = 0;

  // In a raw call: says so and waits for the other thread; true when it came in time.
  bool wait_for_other() {
    std::unique_lock<std::mutex> lock(mutex);
    const int call = ++raw_calls;
    changed.notify_all();
    return changed.wait_for(lock, std::chrono::seconds(5), [&] { return others_done >= call; });
  }
  // The other thread: once raw call `call` has begun, acquires and releases 1 KiB of `pool`.
  void other(BufferPool& pool, int call) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait_for(lock, std::chrono::seconds(5), [&] { return raw_calls >= call; });
    }
    auto block = pool.acquire(1000);
    if (block.is_ok()) pool.release(*block);
    std::lock_guard<std::mutex> lock(mutex);
    ++others_done;
    changed.notify_all();
  }
};

// A raw allocation (cudaMalloc) or release (cudaFree, which waits for the whole device) takes milliseconds: another
// thread's acquire and release go on meanwhile instead of waiting for the pool's lock (each raw call here waited 5 s
// in vain when the pool held its lock through it).
TEST(BufferPool, RawAllocationsAndReleasesRunOutsideThePoolsLock) {
  RawCallWitness witness;
  std::atomic<bool> wait_in_next{false};
  std::atomic<int> others_in_time{0};
  CountingAllocator a;
  const auto allocate = a.allocate();
  const auto release = a.release();
  BufferPool pool(
      "test",
      [&](size_t bytes) {
        if (wait_in_next.exchange(false) && witness.wait_for_other()) ++others_in_time;
        return allocate(bytes);
      },
      [&](uintptr_t handle, size_t bytes) {
        if (wait_in_next.exchange(false) && witness.wait_for_other()) ++others_in_time;
        release(handle, bytes);
      });
  auto cached = pool.acquire(1000);
  ASSERT_TRUE(cached.is_ok());
  pool.release(*cached);
  wait_in_next = true;
  std::thread other([&] { witness.other(pool, 1); });
  auto big = pool.acquire(1 << 20);  // a new class: the raw allocator (the other thread reuses the cached 1 KiB)
  other.join();
  ASSERT_TRUE(big.is_ok());
  pool.release(*big);
  ASSERT_EQ(pool.stats().held_bytes, BufferPool::size_class(1000) + BufferPool::size_class(1 << 20));
  // trim() takes both cached blocks and frees the largest first; meanwhile the other thread's 1 KiB is a new one.
  wait_in_next = true;
  other = std::thread([&] { witness.other(pool, 2); });
  pool.trim();
  other.join();
  EXPECT_EQ(others_in_time.load(), 2);
  EXPECT_EQ(pool.stats().held_bytes, BufferPool::size_class(1000));
  EXPECT_EQ(pool.stats().reuses, 1u);
  EXPECT_EQ(a.allocs, 3);
  EXPECT_EQ(a.frees, 2);
}

TEST(BufferPool, SizeClassesRoundUpWithBoundedWaste) {
  EXPECT_EQ(BufferPool::size_class(1), 256u);
  EXPECT_EQ(BufferPool::size_class(1000), 1024u);
  for (size_t bytes : {size_t{1} << 20, size_t{3000000}, size_t{400000} * 5000}) {
    const size_t cls = BufferPool::size_class(bytes);
    EXPECT_GE(cls, bytes);
    EXPECT_LE(cls, bytes + bytes / 3);
  }
}

}  // namespace
}  // namespace kiln
