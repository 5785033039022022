// BoundedQueue: FIFO, backpressure, close drains, cancel wakes everyone, MPMC without loss.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "pipeline/bounded_queue.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

TEST(BoundedQueue, FifoAndHighWater) {
  BoundedQueue<int> q(3);
  EXPECT_EQ(q.capacity(), 3u);
  EXPECT_TRUE(q.push(1));
  EXPECT_TRUE(q.push(2));
  EXPECT_TRUE(q.push(3));
  int extra = 4;
  EXPECT_FALSE(q.try_push(extra));  // full
  int v = 0;
  EXPECT_TRUE(q.pop(&v));
  EXPECT_EQ(v, 1);
  EXPECT_TRUE(q.try_pop(&v));
  EXPECT_EQ(v, 2);
  EXPECT_TRUE(q.pop(&v));
  EXPECT_EQ(v, 3);
  EXPECT_FALSE(q.try_pop(&v));  // empty
  const BoundedQueueStats s = q.stats();
  EXPECT_EQ(s.capacity, 3);
  EXPECT_EQ(s.high_water, 3);
  EXPECT_EQ(s.pushed, 3);
  EXPECT_EQ(s.popped, 3);
}

TEST(BoundedQueue, ZeroCapacityIsOne) {
  BoundedQueue<int> q(0);
  EXPECT_EQ(q.capacity(), 1u);
  EXPECT_TRUE(q.push(7));
  int v = 8;
  EXPECT_FALSE(q.try_push(v));
}

TEST(BoundedQueue, MoveOnlyItems) {
  BoundedQueue<std::unique_ptr<int>> q(2);
  EXPECT_TRUE(q.push(std::make_unique<int>(5)));
  std::unique_ptr<int> out;
  ASSERT_TRUE(q.pop(&out));
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, 5);
}

TEST(BoundedQueue, PushBlocksWhileFullAndReportsWait) {
  BoundedQueue<int> q(1);
  ASSERT_TRUE(q.push(1));
  std::atomic<bool> pushed{false};
  int64_t waited = -1;
  std::thread producer([&] {
    EXPECT_TRUE(q.push(2, &waited));
    pushed = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(pushed.load());  // backpressure: still blocked
  int v = 0;
  ASSERT_TRUE(q.pop(&v));
  EXPECT_EQ(v, 1);
  producer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_GE(waited, 20'000'000);  // blocked ~30 ms
  EXPECT_GE(q.stats().push_wait_ns, waited);
  ASSERT_TRUE(q.pop(&v));
  EXPECT_EQ(v, 2);
  EXPECT_EQ(q.stats().high_water, 1);
}

TEST(BoundedQueue, BlockedProducerWakesWhenDownToHalf) {
  BoundedQueue<int> q(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(q.push(i));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_TRUE(q.push(4));
    pushed = true;
  });
  std::this_thread::sleep_for(10ms);
  int v = 0;
  ASSERT_TRUE(q.pop(&v));  // 3 left: above half, the producer keeps waiting (hysteresis)
  std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(pushed.load());
  ASSERT_TRUE(q.pop(&v));  // 2 left: half, wakes it
  producer.join();
  EXPECT_TRUE(pushed.load());
  for (int expect = 2; expect <= 4; ++expect) {
    ASSERT_TRUE(q.pop(&v));
    EXPECT_EQ(v, expect);
  }
}

TEST(BoundedQueue, CloseDrainsThenFails) {
  BoundedQueue<int> q(4);
  ASSERT_TRUE(q.push(1));
  ASSERT_TRUE(q.push(2));
  q.close();
  EXPECT_TRUE(q.closed());
  EXPECT_FALSE(q.push(3));
  int v = 0;
  EXPECT_TRUE(q.pop(&v));
  EXPECT_EQ(v, 1);
  EXPECT_TRUE(q.pop(&v));
  EXPECT_EQ(v, 2);
  EXPECT_FALSE(q.pop(&v));
}

TEST(BoundedQueue, CloseWakesBlockedConsumers) {
  BoundedQueue<int> q(2);
  std::vector<std::thread> consumers;
  std::atomic<int> finished{0};
  for (int i = 0; i < 3; ++i) {
    consumers.emplace_back([&] {
      int v = 0;
      EXPECT_FALSE(q.pop(&v));
      ++finished;
    });
  }
  std::this_thread::sleep_for(10ms);
  q.close();
  for (auto& t : consumers) t.join();
  EXPECT_EQ(finished.load(), 3);
  EXPECT_GT(q.stats().pop_wait_ns, 0);
}

TEST(BoundedQueue, CancelWakesProducersAndConsumersAndDrops) {
  BoundedQueue<int> full(1);
  ASSERT_TRUE(full.push(1));
  BoundedQueue<int> empty(1);
  std::thread producer([&] { EXPECT_FALSE(full.push(2)); });
  std::thread consumer([&] {
    int v = 0;
    EXPECT_FALSE(empty.pop(&v));
  });
  std::this_thread::sleep_for(10ms);
  full.cancel();
  empty.cancel();
  producer.join();
  consumer.join();
  int v = 0;
  EXPECT_FALSE(full.pop(&v));  // queued item dropped
  EXPECT_EQ(full.size(), 0u);
  EXPECT_TRUE(full.cancelled());
}

TEST(BoundedQueue, MpmcDeliversEveryItemOnce) {
  constexpr int kProducers = 4;
  constexpr int kConsumers = 3;
  constexpr int kPerProducer = 5000;
  BoundedQueue<int> q(8);
  std::vector<std::atomic<int>> seen(kProducers * kPerProducer);
  std::vector<std::thread> threads;
  std::atomic<int> producers_left{kProducers};
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) ASSERT_TRUE(q.push(p * kPerProducer + i));
      if (--producers_left == 0) q.close();
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&] {
      int v = 0;
      while (q.pop(&v)) seen[static_cast<size_t>(v)]++;
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "item " << i;
  const BoundedQueueStats s = q.stats();
  EXPECT_EQ(s.pushed, kProducers * kPerProducer);
  EXPECT_EQ(s.popped, kProducers * kPerProducer);
  EXPECT_LE(s.high_water, 8);
}

}  // namespace
}  // namespace kiln
