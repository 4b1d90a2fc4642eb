#include <gtest/gtest.h>

#include "policies/eviction/policy_error.h"
#include "policies/eviction/reuse_policy.h"

namespace kvgate::policies {
namespace {

EntryInfo block(uint64_t key, int32_t depth) { return {depth, 0, 4096, Tier::kDevice, key}; }

// A request that inserts `n` new blocks with ids [first, first + n) at depths
// [0, n), then releases them tail first.
void request(EvictionPolicy& p, EntryId first, EntryId n) {
  for (EntryId i = 0; i < n; ++i) p.on_insert(first + i, block(100 + static_cast<uint64_t>(first + i), i));
  for (EntryId i = n - 1; i >= 0; --i) p.on_release(first + i);
}

TEST(ReusePolicy, BeforeItHasLearnedAnythingTheOldestReleaseGoesFirstTailFirst) {
  auto p = make_reuse_policy();
  request(*p, 0, 3);
  request(*p, 3, 2);
  EXPECT_EQ(p->candidates(), 5);
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{2, 1, 0, 4, 3}));
  EXPECT_EQ(p->victim(), 2);
}

TEST(ReusePolicy, AHitBlockIsNoCandidateUntilReleasedAgain) {
  auto p = make_reuse_policy();
  request(*p, 0, 2);
  p->on_hit(0);
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{1}));
  p->on_insert(2, block(200, 1));
  p->on_release(2);
  p->on_release(0);
  EXPECT_EQ(p->candidates(), 3);
  EXPECT_EQ(p->eviction_order().size(), 3u);
}

TEST(ReusePolicy, BlocksOfAKindThatIsReusedOutliveLastBlocksThatNeverAre) {
  // period 1: what is learned counts at once. Each request reuses the
  // previous one's first block and adds two; its last block is never reused.
  auto p = make_reuse_policy({.period = 1});
  request(*p, 0, 3);
  for (EntryId r = 1; r < 40; ++r) {
    const EntryId first = 3 * r;
    p->on_hit(0);
    p->on_insert(first + 1, block(100 + static_cast<uint64_t>(first + 1), 1));
    p->on_insert(first + 2, block(100 + static_cast<uint64_t>(first + 2), 2));
    p->on_release(first + 2);
    p->on_release(first + 1);
    p->on_release(0);
  }
  // The shared first block, reused every time, goes last.
  EXPECT_EQ(p->eviction_order().back(), 0);
}

TEST(ReusePolicy, RefusesParametersOutOfRange) {
  EXPECT_THROW(make_reuse_policy({.growth = 1}), PolicyError);
  EXPECT_THROW(make_reuse_policy({.base = 0}), PolicyError);
  EXPECT_THROW(make_reuse_policy({.period = 0.5}), PolicyError);
  EXPECT_THROW(make_reuse_policy({.ghost = -1}), PolicyError);
  EXPECT_EQ(make_reuse_policy()->params().at("growth"), 1.5);
}

}  // namespace
}  // namespace kvgate::policies
