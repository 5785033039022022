// Dynamic batcher: Triton semantics under a manual clock (no sleeps), plus one real-clock
// multi-producer run.
#include "pipeline/batcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/clock.h"

namespace kiln {
namespace {

using IntBatcher = DynamicBatcher<int>;

std::unique_ptr<IntBatcher> make_batcher(const BatcherConfig& config, const Clock* clock,
                                         IntBatcher::CompletionFn on_complete = {}) {
  auto created = IntBatcher::create(config, clock, std::move(on_complete));
  EXPECT_TRUE(created.is_ok()) << created.status().to_string();
  return std::move(created).value();
}

// max_batch_size and max_queue_delay_us set, everything else at its default.
BatcherConfig config_of(int32_t max_batch_size, int64_t max_queue_delay_us) {
  BatcherConfig config;
  config.max_batch_size = max_batch_size;
  config.max_queue_delay_us = max_queue_delay_us;
  return config;
}

std::vector<int> values(const Batch<int>& batch) {
  std::vector<int> out;
  for (const auto& item : batch.items) out.push_back(item.request);
  return out;
}

TEST(BatcherTest, ConfigValidation) {
  ManualClock clock;
  BatcherConfig config;
  config.max_batch_size = 0;
  EXPECT_EQ(IntBatcher::create(config, &clock).status().code(), Errc::kInvalidArgument);
  config = {};
  config.preferred_batch_sizes = {4, 16};
  config.max_batch_size = 8;
  EXPECT_EQ(IntBatcher::create(config, &clock).status().code(), Errc::kInvalidArgument);
  config = {};
  config.priority_levels = 2;
  config.default_priority_level = 3;
  EXPECT_EQ(IntBatcher::create(config, &clock).status().code(), Errc::kInvalidArgument);
  config = {};
  config.preferred_batch_sizes = {4, 2, 4};
  auto batcher = make_batcher(config, &clock);
  EXPECT_EQ(batcher->config().preferred_batch_sizes, (std::vector<int32_t>{2, 4}));
  EXPECT_EQ(batcher->enqueue(1, /*priority=*/2).code(), Errc::kInvalidArgument);
  EXPECT_EQ(batcher->enqueue(1, 0, /*timeout_us=*/-1).code(), Errc::kInvalidArgument);
}

TEST(BatcherTest, LoneRequestWaitsForQueueDelay) {
  ManualClock clock(1'000'000);
  auto batcher = make_batcher(config_of(8, 100), &clock);
  ASSERT_TRUE(batcher->enqueue(7).is_ok());
  EXPECT_FALSE(batcher->try_form_batch().has_value());
  clock.advance_us(99);
  EXPECT_FALSE(batcher->try_form_batch().has_value());
  clock.advance_us(1);
  auto batch = batcher->try_form_batch();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(values(*batch), std::vector<int>{7});
  EXPECT_EQ(batch->items[0].queue_ns, 100'000);
  EXPECT_EQ(batcher->pending(), 0u);
}

TEST(BatcherTest, ZeroDelayDispatchesAtOnce) {
  ManualClock clock;
  auto batcher = make_batcher(config_of(8, 0), &clock);
  ASSERT_TRUE(batcher->enqueue(1).is_ok());
  ASSERT_TRUE(batcher->enqueue(2).is_ok());
  auto batch = batcher->try_form_batch();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(values(*batch), (std::vector<int>{1, 2}));
}

TEST(BatcherTest, PreferredSizeDispatchedAsSoonAsAvailable) {
  ManualClock clock;
  BatcherConfig config = config_of(16, 1'000'000);
  config.preferred_batch_sizes = {4, 8};
  auto batcher = make_batcher(config, &clock);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(batcher->enqueue(i).is_ok());
  EXPECT_FALSE(batcher->try_form_batch().has_value());  // 3: no preferred size fits yet
  for (int i = 3; i < 7; ++i) ASSERT_TRUE(batcher->enqueue(i).is_ok());
  auto batch = batcher->try_form_batch();  // 7 queued: largest preferred <= 7 is 4
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(values(*batch), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(batcher->try_form_batch().has_value());  // 3 left
  for (int i = 7; i < 12; ++i) ASSERT_TRUE(batcher->enqueue(i).is_ok());
  batch = batcher->try_form_batch();  // 8 queued: exactly the preferred 8
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->size(), 8u);
  EXPECT_EQ(batch->items.front().request, 4);
  EXPECT_EQ(batcher->pending(), 0u);
}

TEST(BatcherTest, MaxBatchSizeCaps) {
  ManualClock clock;
  auto batcher = make_batcher(config_of(4, 1'000'000), &clock);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(batcher->enqueue(i).is_ok());
  auto a = batcher->try_form_batch();
  auto b = batcher->try_form_batch();
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(values(*a), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(values(*b), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_FALSE(batcher->try_form_batch().has_value());  // 2 left, delay not reached
  clock.advance_us(1'000'000);
  auto c = batcher->try_form_batch();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(values(*c), (std::vector<int>{8, 9}));
  EXPECT_EQ(a->sequence, 1u);
  EXPECT_EQ(c->sequence, 3u);
}

TEST(BatcherTest, BatchLimitMovesWithinTheConfiguredMaximum) {
  ManualClock clock;
  auto batcher = make_batcher(config_of(4, 0), &clock);
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(batcher->enqueue(i).is_ok());
  batcher->batch_limit_set(2);  // e.g. halved after running out of memory
  EXPECT_EQ(batcher->batch_limit(), 2);
  auto a = batcher->try_form_batch();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(values(*a), (std::vector<int>{0, 1}));
  batcher->batch_limit_set(100);  // clamped to the configured 4
  EXPECT_EQ(batcher->batch_limit(), 4);
  auto b = batcher->try_form_batch();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(values(*b), (std::vector<int>{2, 3, 4, 5}));
  batcher->batch_limit_set(0);  // at least one
  auto c = batcher->try_form_batch();
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(values(*c), (std::vector<int>{6}));
}

TEST(BatcherTest, PrioritiesThenFifoWithTies) {
  ManualClock clock;
  BatcherConfig config = config_of(6, 10);
  config.priority_levels = 3;
  config.default_priority_level = 2;
  auto batcher = make_batcher(config, &clock);
  ASSERT_TRUE(batcher->enqueue(30, 3).is_ok());
  ASSERT_TRUE(batcher->enqueue(20, 0).is_ok());  // default level 2
  ASSERT_TRUE(batcher->enqueue(10, 1).is_ok());
  ASSERT_TRUE(batcher->enqueue(31, 3).is_ok());
  ASSERT_TRUE(batcher->enqueue(11, 1).is_ok());
  ASSERT_TRUE(batcher->enqueue(21, 2).is_ok());
  auto batch = batcher->try_form_batch();  // full (6)
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(values(*batch), (std::vector<int>{10, 11, 20, 21, 30, 31}));
  EXPECT_EQ(batch->items[0].priority, 1);
  EXPECT_EQ(batch->items[2].priority, 2);
}

TEST(BatcherTest, ThousandsOfEqualPrioritiesStayFifo) {
  ManualClock clock;
  BatcherConfig config = config_of(64, 0);
  config.priority_levels = 2;
  auto batcher = make_batcher(config, &clock);
  constexpr int kCount = 5000;
  for (int i = 0; i < kCount; ++i) ASSERT_TRUE(batcher->enqueue(i, 2).is_ok());
  ASSERT_TRUE(batcher->enqueue(-1, 1).is_ok());  // jumps the queue
  std::vector<int> seen;
  while (auto batch = batcher->try_form_batch()) {
    EXPECT_LE(batch->size(), 64u);
    for (int v : values(*batch)) seen.push_back(v);
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kCount + 1));
  EXPECT_EQ(seen[0], -1);
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(seen[static_cast<size_t>(i + 1)], i);
}

TEST(BatcherTest, TimeoutRejectCompletesWithStatusAndNeverBatches) {
  ManualClock clock;
  BatcherConfig config = config_of(8, 1000);
  config.timeout_action = TimeoutAction::kReject;
  std::vector<std::pair<int, BatchResponse>> done;
  auto batcher = make_batcher(
      config, &clock, [&](int& request, const BatchResponse& response) { done.emplace_back(request, response); });
  ASSERT_TRUE(batcher->enqueue(1, 0, /*timeout_us=*/500).is_ok());
  ASSERT_TRUE(batcher->enqueue(2).is_ok());  // no timeout
  clock.advance_us(499);
  EXPECT_FALSE(batcher->try_form_batch().has_value());
  EXPECT_TRUE(done.empty());
  clock.advance_us(1);
  EXPECT_FALSE(batcher->try_form_batch().has_value());  // 2 still waits for the delay
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].first, 1);
  EXPECT_EQ(done[0].second.status.code(), Errc::kCancelled);
  EXPECT_NE(done[0].second.status.message().find("timed out"), std::string::npos);
  EXPECT_EQ(done[0].second.batch_size, 0);
  EXPECT_EQ(done[0].second.queue_ns, 500'000);
  clock.advance_us(500);
  auto batch = batcher->try_form_batch();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(values(*batch), std::vector<int>{2});
  EXPECT_EQ(batcher->stats().timed_out_rejected, 1u);
}

TEST(BatcherTest, DefaultTimeoutMayOnlyBeLowered) {
  ManualClock clock;
  BatcherConfig config = config_of(8, 10'000);
  config.default_timeout_us = 100;
  int rejected = 0;
  auto batcher = make_batcher(config, &clock, [&](int&, const BatchResponse& r) { rejected += !r.status.is_ok(); });
  ASSERT_TRUE(batcher->enqueue(1, 0, /*timeout_us=*/5000).is_ok());  // clamped to 100
  clock.advance_us(100);
  EXPECT_FALSE(batcher->try_form_batch().has_value());
  EXPECT_EQ(rejected, 1);
}

TEST(BatcherTest, HugeTimeoutAndDelaySaturate) {
  ManualClock clock(1'000'000'000);
  BatcherConfig config = config_of(8, std::numeric_limits<int64_t>::max());
  int rejected = 0;
  auto batcher = make_batcher(config, &clock, [&](int&, const BatchResponse&) { ++rejected; });
  ASSERT_TRUE(batcher->enqueue(1, 0, std::numeric_limits<int64_t>::max()).is_ok());
  clock.advance_ms(1'000'000);
  EXPECT_FALSE(batcher->try_form_batch().has_value());  // neither timed out nor delayed out
  EXPECT_EQ(rejected, 0);
  batcher->close();
  EXPECT_TRUE(batcher->try_form_batch().has_value());
}

TEST(BatcherTest, TimeoutDelayOrdersAfterOthers) {
  ManualClock clock;
  BatcherConfig config = config_of(3, 1000);
  config.timeout_action = TimeoutAction::kDelay;
  int callbacks = 0;
  auto batcher = make_batcher(config, &clock, [&](int&, const BatchResponse&) { ++callbacks; });
  ASSERT_TRUE(batcher->enqueue(1, 0, /*timeout_us=*/100).is_ok());
  ASSERT_TRUE(batcher->enqueue(2, 0, /*timeout_us=*/100).is_ok());
  clock.advance_us(200);
  EXPECT_FALSE(batcher->try_form_batch().has_value());  // timed out -> delayed, still waiting
  EXPECT_EQ(batcher->stats().timed_out_delayed, 2u);
  ASSERT_TRUE(batcher->enqueue(3).is_ok());
  ASSERT_TRUE(batcher->enqueue(4).is_ok());
  auto batch = batcher->try_form_batch();  // full: live 3, 4 first, then delayed 1
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(values(*batch), (std::vector<int>{3, 4, 1}));
  EXPECT_FALSE(batch->items[0].delayed);
  EXPECT_TRUE(batch->items[2].delayed);
  clock.advance_us(1000);
  batch = batcher->try_form_batch();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(values(*batch), std::vector<int>{2});
  EXPECT_EQ(callbacks, 0);  // nothing rejected
}

TEST(BatcherTest, FullQueueRejectedImmediately) {
  ManualClock clock;
  BatcherConfig config = config_of(8, 1000);
  config.max_queue_size = 3;
  auto batcher = make_batcher(config, &clock);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(batcher->enqueue(i).is_ok());
  Status full = batcher->enqueue(3);
  EXPECT_EQ(full.code(), Errc::kCancelled);
  EXPECT_NE(full.message().find("queue full"), std::string::npos) << full.message();
  EXPECT_EQ(batcher->stats().rejected_full, 1u);
  clock.advance_us(1000);
  ASSERT_TRUE(batcher->try_form_batch().has_value());
  EXPECT_TRUE(batcher->enqueue(4).is_ok());  // room again
}

TEST(BatcherTest, ExpiredRequestsFreeQueueSlots) {
  ManualClock clock;
  BatcherConfig config = config_of(8, 1000);
  config.max_queue_size = 2;
  int rejected = 0;
  auto batcher = make_batcher(config, &clock, [&](int&, const BatchResponse&) { ++rejected; });
  ASSERT_TRUE(batcher->enqueue(0, 0, 10).is_ok());
  ASSERT_TRUE(batcher->enqueue(1, 0, 10).is_ok());
  clock.advance_us(10);
  EXPECT_TRUE(batcher->enqueue(2).is_ok());
  EXPECT_EQ(rejected, 2);
}

TEST(BatcherTest, ByteBudgetRespected) {
  ManualClock clock;
  BatcherConfig config = config_of(8, 1'000'000);
  config.max_batch_bytes = 1000;
  auto batcher = make_batcher(config, &clock);
  EXPECT_EQ(batcher->enqueue(99, 0, 0, 1001).code(), Errc::kInvalidArgument);  // could never fit
  const size_t sizes[] = {400, 400, 300, 600, 100};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(batcher->enqueue(i, 0, 0, sizes[i]).is_ok());
  auto a = batcher->try_form_batch();  // 400 + 400, next (300) does not fit: dispatch now
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(values(*a), (std::vector<int>{0, 1}));
  EXPECT_EQ(a->bytes, 800u);
  EXPECT_FALSE(batcher->try_form_batch().has_value());  // 300 + 600 + 100 fits: may still grow
  clock.advance_us(1'000'000);
  auto b = batcher->try_form_batch();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(values(*b), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(b->bytes, 1000u);
}

TEST(BatcherTest, CloseDrainsAndRejects) {
  ManualClock clock;
  auto batcher = make_batcher(config_of(2, 1'000'000), &clock);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(batcher->enqueue(i).is_ok());
  batcher->close();
  Status rejected = batcher->enqueue(9);
  EXPECT_EQ(rejected.code(), Errc::kCancelled);
  EXPECT_NE(rejected.message().find("closed"), std::string::npos);
  auto a = batcher->next_batch();
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ(values(*a), (std::vector<int>{0, 1}));
  auto b = batcher->next_batch();  // no waiting for the delay once closed
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(values(*b), std::vector<int>{2});
  auto c = batcher->next_batch();
  EXPECT_EQ(c.status().code(), Errc::kCancelled);
  EXPECT_EQ(batcher->stats().rejected_closed, 1u);
}

TEST(BatcherTest, CloseWakesBlockedConsumer) {
  BatcherConfig config;
  auto batcher = make_batcher(config, &SteadyClock::instance());
  std::atomic<bool> returned{false};
  Errc code = Errc::kOk;
  std::thread consumer([&] {
    auto r = batcher->next_batch();
    code = r.status().code();
    returned = true;
  });
  batcher->close();
  consumer.join();
  EXPECT_TRUE(returned);
  EXPECT_EQ(code, Errc::kCancelled);
}

TEST(BatcherTest, NextBatchDeadlineWithManualClock) {
  ManualClock clock;
  auto batcher = make_batcher(config_of(8, 100), &clock);
  ASSERT_TRUE(batcher->enqueue(1).is_ok());
  auto none = batcher->next_batch(/*deadline_ns=*/clock.now());  // deadline already reached
  ASSERT_TRUE(none.is_ok());
  EXPECT_TRUE(none->empty());
  std::thread advancer([&] { clock.advance_us(100); });
  auto batch = batcher->next_batch();  // polls the manual clock until the delay passes
  advancer.join();
  ASSERT_TRUE(batch.is_ok());
  EXPECT_EQ(values(*batch), std::vector<int>{1});
}

TEST(BatcherTest, RecordsQueueTimeBatchSizeAndComputeTime) {
  ManualClock clock;
  BatcherConfig config = config_of(3, 1'000'000);
  std::vector<BatchResponse> seen;
  auto batcher = make_batcher(config, &clock, [&](int&, const BatchResponse& r) { seen.push_back(r); });
  ASSERT_TRUE(batcher->enqueue(0).is_ok());
  clock.advance_us(10);
  ASSERT_TRUE(batcher->enqueue(1).is_ok());
  clock.advance_us(5);
  ASSERT_TRUE(batcher->enqueue(2).is_ok());
  auto batch = batcher->try_form_batch();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->items[0].queue_ns, 15'000);
  EXPECT_EQ(batch->items[1].queue_ns, 5'000);
  EXPECT_EQ(batch->items[2].queue_ns, 0);
  auto responses = batcher->complete(*batch, /*compute_ns=*/2'500'000);
  ASSERT_EQ(responses.size(), 3u);
  ASSERT_EQ(seen.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(responses[i].status.is_ok());
    EXPECT_EQ(responses[i].batch_size, 3);
    EXPECT_EQ(responses[i].compute_ns, 2'500'000);
    EXPECT_EQ(responses[i].queue_ns, batch->items[i].queue_ns);
    EXPECT_EQ(seen[i].id, responses[i].id);
  }
  EXPECT_LT(responses[0].id, responses[1].id);
  BatcherStats stats = batcher->stats();
  EXPECT_EQ(stats.batches, 1u);
  EXPECT_EQ(stats.batched_requests, 3u);
  EXPECT_EQ(stats.completed_requests, 3u);
  EXPECT_EQ(stats.total_queue_ns, 20'000);
  EXPECT_EQ(stats.total_compute_ns, 2'500'000);
  EXPECT_DOUBLE_EQ(stats.average_batch_size(), 3.0);
  // A failed batch propagates its status to every request.
  ASSERT_TRUE(batcher->enqueue(3).is_ok());
  clock.advance_us(1'000'000);
  auto failed = batcher->try_form_batch();
  ASSERT_TRUE(failed.has_value());
  auto failed_responses = batcher->complete(*failed, 10, Status(Errc::kOutOfMemory, "device OOM"));
  EXPECT_EQ(failed_responses[0].status.code(), Errc::kOutOfMemory);
}

TEST(BatcherTest, MoveOnlyRequests) {
  ManualClock clock;
  BatcherConfig config;
  auto created = DynamicBatcher<std::unique_ptr<int>>::create(config, &clock);
  ASSERT_TRUE(created.is_ok());
  auto batcher = std::move(created).value();
  ASSERT_TRUE(batcher->enqueue(std::make_unique<int>(5)).is_ok());
  auto batch = batcher->try_form_batch();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(*batch->items[0].request, 5);
}

// Several producers, one consumer, real clock: every request comes out exactly once.
TEST(BatcherTest, MultiThreadedNothingLostOrDuplicated) {
  BatcherConfig config = config_of(16, 200);
  config.preferred_batch_sizes = {8};
  config.priority_levels = 3;
  config.max_queue_size = 256;
  auto batcher = make_batcher(config, &SteadyClock::instance());
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 3000;
  std::vector<int> seen;
  std::thread consumer([&] {
    for (;;) {
      auto batch = batcher->next_batch();
      if (!batch.is_ok()) break;
      EXPECT_LE(batch->size(), 16u);
      for (const auto& item : batch->items) seen.push_back(item.request);
      batcher->complete(*batch, 0);
    }
  });
  std::vector<std::thread> producers;
  std::atomic<int> full_retries{0};
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        const int value = p * kPerProducer + i;
        for (;;) {
          Status s = batcher->enqueue(value, 1 + (i % 3));
          if (s.is_ok()) break;
          ASSERT_EQ(s.code(), Errc::kCancelled);  // queue full: back off and retry
          full_retries.fetch_add(1, std::memory_order_relaxed);
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto& t : producers) t.join();
  batcher->close();
  consumer.join();
  ASSERT_EQ(seen.size(), static_cast<size_t>(kProducers * kPerProducer));
  std::set<int> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size());
  EXPECT_EQ(*unique.begin(), 0);
  EXPECT_EQ(*unique.rbegin(), kProducers * kPerProducer - 1);
  // Within one producer and one level, FIFO holds.
  std::vector<std::vector<int>> last(kProducers, std::vector<int>(3, -1));
  for (int v : seen) {
    const int p = v / kPerProducer;
    const int i = v % kPerProducer;
    EXPECT_GT(i, last[p][i % 3]);
    last[p][i % 3] = i;
  }
  BatcherStats stats = batcher->stats();
  EXPECT_EQ(stats.batched_requests, seen.size());
  EXPECT_EQ(stats.completed_requests, seen.size());
  EXPECT_EQ(stats.pending, 0u);
}

}  // namespace
}  // namespace kiln
