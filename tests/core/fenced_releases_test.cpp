#include "core/fenced_releases.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

namespace kiln {
namespace {

// Fences as a test drives them: a fence passes when the test says so; wait() makes it pass.
struct Fences {
  std::set<FencedReleases::Fence> passed;
  std::vector<FencedReleases::Fence> waited;
  std::vector<FencedReleases::Fence> destroyed;

  FencedReleases::FenceOps ops() {
    return {[this](FencedReleases::Fence f) { return passed.count(f) > 0; },
            [this](FencedReleases::Fence f) {
              waited.push_back(f);
              passed.insert(f);
            },
            [this](FencedReleases::Fence f) { destroyed.push_back(f); }};
  }
};

TEST(FencedReleases, HoldsEachThingUntilItsOwnFencePasses) {
  Fences fences;
  FencedReleases releases(fences.ops());
  auto first = std::make_shared<int>(1);
  auto second = std::make_shared<int>(2);
  const std::weak_ptr<int> first_seen = first;
  const std::weak_ptr<int> second_seen = second;
  releases.add(10, std::move(first));
  releases.add(20, std::move(second));
  EXPECT_FALSE(first_seen.expired());
  EXPECT_EQ(releases.collect(), 2u);

  fences.passed.insert(20);  // the later fence passes first: only its thing goes
  EXPECT_EQ(releases.collect(), 1u);
  EXPECT_FALSE(first_seen.expired());
  EXPECT_TRUE(second_seen.expired());
  EXPECT_EQ(fences.destroyed, std::vector<FencedReleases::Fence>{20});

  fences.passed.insert(10);
  EXPECT_EQ(releases.collect(), 0u);
  EXPECT_TRUE(first_seen.expired());
  EXPECT_TRUE(fences.waited.empty());  // nothing was waited for
}

TEST(FencedReleases, DrainWaitsForEveryFenceAndTheDestructorDrains) {
  Fences fences;
  auto kept = std::make_shared<int>(3);
  const std::weak_ptr<int> seen = kept;
  {
    FencedReleases releases(fences.ops());
    releases.add(30, std::move(kept));
    EXPECT_FALSE(seen.expired());
  }
  EXPECT_TRUE(seen.expired());
  EXPECT_EQ(fences.waited, std::vector<FencedReleases::Fence>{30});
  EXPECT_EQ(fences.destroyed, std::vector<FencedReleases::Fence>{30});
}

// Dropping a thing may call back into the owner (a pool taking memory back, which collects again): no deadlock.
TEST(FencedReleases, AThingDroppedMayCallBackIn) {
  Fences fences;
  FencedReleases releases(fences.ops());
  int callbacks = 0;
  std::shared_ptr<const void> calls_back(nullptr, [&](const void*) {
    ++callbacks;
    releases.collect();
  });
  releases.add(40, std::move(calls_back));
  fences.passed.insert(40);
  EXPECT_EQ(releases.collect(), 0u);
  EXPECT_EQ(callbacks, 1);
}

}  // namespace
}  // namespace kiln
