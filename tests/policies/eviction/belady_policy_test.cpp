#include <gtest/gtest.h>

#include "policies/eviction/belady_policy.h"
#include "policies/eviction/policy_error.h"
#include "policies/eviction/policy_registry.h"

namespace kvgate::policies {
namespace {

void add(BeladyPolicy& p, EntryId id, int32_t depth, int64_t next_use, uint64_t key = 0) {
  p.on_insert(id, {depth, 0, 4096, Tier::kDevice, key});
  p.set_next_use(id, next_use);
  p.on_release(id);
}

TEST(BeladyPolicy, TheFarthestNextUseGoesFirstAndNeverBeforeThat) {
  BeladyPolicy p;
  add(p, 0, 0, 5);
  add(p, 1, 0, 9);
  add(p, 2, 0, BeladyPolicy::kNever);
  add(p, 3, 0, 1);
  EXPECT_EQ(p.eviction_order(), (std::vector<EntryId>{2, 1, 0, 3}));
}

TEST(BeladyPolicy, OnATieTheDeeperBlockGoesFirstThenTheSmallerKey) {
  BeladyPolicy p;
  add(p, 0, 1, 7, 30);
  add(p, 1, 2, 7, 20);
  add(p, 2, 1, 7, 10);
  EXPECT_EQ(p.eviction_order(), (std::vector<EntryId>{1, 2, 0}));
}

TEST(BeladyPolicy, ANewNextUseReRanksACandidate) {
  BeladyPolicy p;
  add(p, 0, 0, 5);
  add(p, 1, 0, 9);
  EXPECT_EQ(p.victim(), 1);
  p.set_next_use(1, 2);
  EXPECT_EQ(p.victim(), 0);
  p.on_hit(0);  // referenced: not a candidate whatever its next use
  p.set_next_use(0, 100);
  EXPECT_EQ(p.victim(), 1);
  p.on_release(0);
  EXPECT_EQ(p.victim(), 0);
}

TEST(BeladyPolicy, AnEntryNotToldItsNextUseIsNeverUsedAgain) {
  BeladyPolicy p;
  add(p, 0, 0, 3);
  p.on_insert(1, {});
  p.on_release(1);
  EXPECT_EQ(p.victim(), 1);
}

TEST(BeladyPolicy, TheRegistryListsItAsOfflineAndWillNotBuildIt) {
  const PolicyInfo* info = find_eviction_policy("belady");
  ASSERT_NE(info, nullptr);
  EXPECT_FALSE(info->online);
  EXPECT_THROW(make_eviction_policy({"belady", {}}), PolicyError);
}

}  // namespace
}  // namespace kvgate::policies
