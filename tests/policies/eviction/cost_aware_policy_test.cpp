#include <gtest/gtest.h>

#include "policies/eviction/cost_aware_policy.h"
#include "policies/eviction/policy_error.h"

namespace kvgate::policies {
namespace {

EntryInfo at(int32_t depth, Tier tier = Tier::kDevice) { return {depth, 0, 4096, tier, 0}; }

TEST(CostAwarePolicy, OnTheLastTierDeeperBlocksCostMoreToLose) {
  auto p = make_cost_aware_policy({.depth_weight = 0.5});
  // Unrelated blocks (no parent-child releases in a row): 0 at depth 4, 1 at depth 0.
  p->on_insert(0, at(4));
  p->on_insert(1, at(0));
  p->on_release(0);
  p->on_release(1);
  EXPECT_EQ(p->victim(), 1);  // 1 + 0.5 x 0 < 1 + 0.5 x 4
}

TEST(CostAwarePolicy, AboveALowerTierTheRestoreCostIsTheSameAtEveryDepth) {
  auto p = make_cost_aware_policy({.depth_weight = 0.5, .restore_host = 0.1, .last_tier = 1});
  p->on_insert(0, at(4));
  p->on_insert(1, at(0));
  p->on_release(0);
  p->on_release(1);
  EXPECT_EQ(p->victim(), 0);  // equal losses: the deeper block first
  // On the host tier (the last one) depth counts again.
  auto host = make_cost_aware_policy({.depth_weight = 0.5, .restore_host = 0.1, .last_tier = 1});
  host->on_insert(0, at(4, Tier::kHost));
  host->on_insert(1, at(0, Tier::kHost));
  host->on_release(0);
  host->on_release(1);
  EXPECT_EQ(host->victim(), 1);
}

TEST(CostAwarePolicy, AParentNeverGoesBeforeItsChild) {
  auto p = make_cost_aware_policy({.depth_weight = 1});
  for (int32_t d = 0; d < 4; ++d) p->on_insert(d, at(d));
  for (int32_t d = 3; d >= 0; --d) p->on_release(d);  // tail first, as the pool releases a request
  // Depth alone would evict 0 first; the chain rule lifts each parent to its child.
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{3, 2, 1, 0}));
}

TEST(CostAwarePolicy, HitsRaiseAndTheInflationClockAgesPriorities) {
  auto p = make_cost_aware_policy({.depth_weight = 0});
  p->on_insert(0, at(0));
  p->on_insert(1, at(0));
  p->on_hit(0);
  p->on_hit(0);
  p->on_release(0);  // priority 0 + 3 x 1
  p->on_release(1);  // 0 + 1
  EXPECT_EQ(p->victim(), 1);
  p->on_remove(1);  // the clock moves to 1
  p->on_insert(2, at(0));
  p->on_insert(3, at(0));
  p->on_release(2);  // 1 + 1 = 2 < 3
  EXPECT_EQ(p->victim(), 2);
  p->on_remove(2);  // clock 2
  p->on_release(3);  // 2 + 1 = 3: a tie with 0 (3), the smaller id first
  EXPECT_EQ(p->victim(), 0);
  p->on_remove(0);  // clock 3
  p->on_insert(4, at(0));
  p->on_release(4);  // 3 + 1 = 4: newer than 3
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{3, 4}));
}

TEST(CostAwarePolicy, RefusesParametersOutOfRange) {
  EXPECT_THROW(make_cost_aware_policy({.depth_weight = -1}), PolicyError);
  EXPECT_THROW(make_cost_aware_policy({.last_tier = 3}), PolicyError);
  EXPECT_THROW(make_cost_aware_policy({.max_hits = 0}), PolicyError);
}

}  // namespace
}  // namespace kvgate::policies
