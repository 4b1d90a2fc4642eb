#include <gtest/gtest.h>

#include "policies/eviction/lru_policy.h"

namespace kvgate::policies {
namespace {

EntryInfo info(int32_t depth) { return {depth, {}, 4096, Tier::kDevice}; }

TEST(LruPolicy, InsertedEntriesAreNotCandidatesUntilReleased) {
  auto p = make_lru_policy();
  p->on_insert(3, info(0));
  p->on_insert(7, info(1));
  EXPECT_EQ(p->victim(), std::nullopt);
  EXPECT_EQ(p->candidates(), 0);
  p->on_release(7);
  EXPECT_EQ(p->victim(), 7);
  EXPECT_EQ(p->candidates(), 1);
}

TEST(LruPolicy, ReleasedLongestAgoGoesFirst) {
  auto p = make_lru_policy();
  for (EntryId id : {0, 1, 2, 3}) p->on_insert(id, info(id));
  // A request releases its chain tail first: 3, 2, 1, 0.
  for (EntryId id : {3, 2, 1, 0}) p->on_release(id);
  EXPECT_EQ(p->victim(), 3);
  p->on_remove(3);
  EXPECT_EQ(p->victim(), 2);
  // A hit takes an entry off the candidates; its next release makes it the newest.
  p->on_hit(2);
  EXPECT_EQ(p->victim(), 1);
  p->on_release(2);
  p->on_remove(1);
  EXPECT_EQ(p->victim(), 0);
  p->on_remove(0);
  EXPECT_EQ(p->victim(), 2);
  p->on_remove(2);
  EXPECT_EQ(p->victim(), std::nullopt);
  EXPECT_EQ(p->candidates(), 0);
}

TEST(LruPolicy, HitOnAReferencedEntryChangesNothing) {
  auto p = make_lru_policy();
  p->on_insert(0, info(0));
  p->on_insert(1, info(0));
  p->on_release(0);
  p->on_hit(1);  // still referenced by its writer and now by a reader
  EXPECT_EQ(p->victim(), 0);
  EXPECT_EQ(p->candidates(), 1);
}

TEST(LruPolicy, AReusedIdStartsOver) {
  auto p = make_lru_policy();
  p->on_insert(5, info(0));
  p->on_release(5);
  p->on_remove(5);
  p->on_insert(5, info(2));  // the block was reused for another chain
  EXPECT_EQ(p->victim(), std::nullopt);
  p->on_release(5);
  EXPECT_EQ(p->victim(), 5);
}

TEST(LruPolicy, UnknownIdsAreRefused) {
  auto p = make_lru_policy();
  EXPECT_THROW(p->on_release(9), std::invalid_argument);
  EXPECT_THROW(p->on_insert(-1, info(0)), std::invalid_argument);
}

}  // namespace
}  // namespace kvgate::policies
