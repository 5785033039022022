#include "core/lending_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

namespace kiln {
namespace {

struct Slot {
  int id = 0;
};

LendingPool<Slot>::MakeFn counting_maker(std::atomic<int>* made) {
  return [made]() -> Result<std::unique_ptr<Slot>> {
    auto slot = std::make_unique<Slot>();
    slot->id = ++*made;
    return slot;
  };
}

TEST(LendingPool, AReturnedObjectIsLentAgainInsteadOfMakingOne) {
  std::atomic<int> made{0};
  LendingPool<Slot> pool(counting_maker(&made));
  int first_id = 0;
  {
    auto lease = pool.acquire();
    ASSERT_TRUE(lease.is_ok());
    first_id = lease.value()->id;
  }
  auto again = pool.acquire();
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again.value()->id, first_id);
  EXPECT_EQ(made.load(), 1);
  EXPECT_EQ(pool.made(), 1);
}

TEST(LendingPool, WithoutALimitEveryConcurrentUserGetsItsOwn) {
  std::atomic<int> made{0};
  LendingPool<Slot> pool(counting_maker(&made));
  std::vector<LendingPool<Slot>::Lease> leases;
  for (int i = 0; i < 5; ++i) leases.push_back(std::move(pool.acquire()).value());
  EXPECT_EQ(made.load(), 5);
}

TEST(LendingPool, AtTheLimitAcquireWaitsForALeaseToEnd) {
  std::atomic<int> made{0};
  LendingPool<Slot> pool(counting_maker(&made), 2);
  std::optional<LendingPool<Slot>::Lease> a(std::move(pool.acquire()).value());
  auto b = std::move(pool.acquire()).value();
  const int a_id = (*a)->id;

  std::atomic<bool> got{false};
  int third_id = 0;
  std::thread waiter([&] {
    auto c = pool.acquire();
    third_id = c.value()->id;
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(got.load()) << "a third object was lent past the limit of 2";
  a.reset();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(third_id, a_id) << "the waiter gets the returned object";
  EXPECT_EQ(made.load(), 2);
}

TEST(LendingPool, AFailedMakeGivesItsPlaceBack) {
  int calls = 0;
  LendingPool<Slot> pool(
      [&calls]() -> Result<std::unique_ptr<Slot>> {
        if (++calls == 1) return Status(Errc::kOutOfMemory, "no memory for the first");
        return std::make_unique<Slot>();
      },
      1);
  auto failed = pool.acquire();
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().code(), Errc::kOutOfMemory);
  EXPECT_EQ(pool.made(), 0);
  auto second = pool.acquire();  // would wait forever if the failure kept its place
  EXPECT_TRUE(second.is_ok());
}

TEST(LendingPool, ManyThreadsNeverHoldMoreThanTheLimit) {
  std::atomic<int> made{0};
  LendingPool<Slot> pool(counting_maker(&made), 3);
  std::atomic<int> holding{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto lease = pool.acquire();
        const int now = ++holding;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::yield();
        --holding;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_LE(most.load(), 3);
  EXPECT_LE(made.load(), 3);
}

}  // namespace
}  // namespace kiln
