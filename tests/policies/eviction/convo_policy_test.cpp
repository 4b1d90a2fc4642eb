#include <gtest/gtest.h>

#include "policies/eviction/convo_policy.h"

namespace kvgate::policies {
namespace {

EntryInfo block(EntryId id, int32_t depth) { return {depth, 0, 4096, Tier::kDevice, 100 + static_cast<uint64_t>(id)}; }

// One request: inserts `ids` at depths 0, 1, ..., then releases them tail first, as the pool does.
void request(EvictionPolicy& p, const std::vector<EntryId>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) p.on_insert(ids[i], block(ids[i], static_cast<int32_t>(i)));
  for (size_t i = ids.size(); i-- > 0;) p.on_release(ids[i]);
}

TEST(ConvoPolicy, EachRequestsLastBlockLeavesFirst) {
  auto p = make_convo_policy({.small = 0.1, .adapt = false});
  request(*p, {0, 1, 2});
  request(*p, {3, 4});
  // Tails 2 and 4 (oldest first), then S3-FIFO's small queue by release: 1, 0, 3.
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{2, 4, 1, 0, 3}));
  EXPECT_EQ(p->victim(), 2);
  EXPECT_EQ(p->candidates(), 5);
}

TEST(ConvoPolicy, AChainsFirstBlockIsNoTail) {
  auto p = make_convo_policy({.small = 0.1, .adapt = false});
  request(*p, {0, 1});
  request(*p, {2});  // one block at depth 0: shared by every prompt, ordered by S3-FIFO
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{1, 0, 2}));
}

TEST(ConvoPolicy, AHitTailIsAReusedBlock) {
  auto p = make_convo_policy({.small = 0.1, .adapt = false});
  request(*p, {0, 1, 2});
  // The next request hits the whole chain and adds block 5 after it.
  for (EntryId id : {0, 1, 2}) p->on_hit(id);
  p->on_insert(5, block(5, 3));
  for (EntryId id : {5, 2, 1, 0}) p->on_release(id);
  // 5 is the new tail; 0, 1, 2 were hit: S3-FIFO's main queue, by release.
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{5, 2, 1, 0}));
  p->on_remove(5);
  p->on_remove(2);
  EXPECT_EQ(p->victim(), 1);
}

TEST(ConvoPolicy, TakesS3FifosParameters) {
  auto p = make_convo_policy({.small = 0.3});
  EXPECT_EQ(p->name(), "convo");
  EXPECT_EQ(p->params().at("small"), 0.3);
}

}  // namespace
}  // namespace kvgate::policies
