#include <gtest/gtest.h>

#include "policies/eviction/policy_error.h"
#include "policies/eviction/s3fifo_policy.h"

namespace kvgate::policies {
namespace {

EntryInfo block(uint64_t key, int32_t depth = 1) { return {depth, 0, 4096, Tier::kDevice, key}; }

// Inserts and releases entries [first, first + n) with keys 100 + id.
void fill(EvictionPolicy& p, EntryId first, EntryId n) {
  for (EntryId id = first; id < first + n; ++id) p.on_insert(id, block(100 + static_cast<uint64_t>(id)));
  for (EntryId id = first; id < first + n; ++id) p.on_release(id);
}

TEST(S3FifoPolicy, OneHitWondersLeaveThroughTheSmallQueueFirst) {
  auto p = make_s3fifo_policy({.small = 0.1, .adapt = false});
  fill(*p, 0, 10);
  // 2 and 5 are reused: they move to the main queue.
  for (EntryId id : {2, 5}) p->on_hit(id), p->on_release(id);
  // The small queue (8 entries, over 10% of 10) goes first, oldest first.
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{0, 1, 3, 4, 6, 7, 8, 9, 2, 5}));
}

TEST(S3FifoPolicy, TheMainQueueGoesFirstWhileTheSmallQueueIsUnderItsShare) {
  auto p = make_s3fifo_policy({.small = 0.5, .adapt = false});
  fill(*p, 0, 4);
  for (EntryId id : {0, 1, 2}) p->on_hit(id), p->on_release(id);
  // Small: {3} (1 of 4 < 50%); main: 0, 1, 2 by release.
  EXPECT_EQ(p->victim(), 0);
  p->on_remove(0);  // 3 entries: small 1 < 1.5
  EXPECT_EQ(p->victim(), 1);
  p->on_remove(1);  // 2 entries: small 1 >= 1
  EXPECT_EQ(p->victim(), 3);
}

TEST(S3FifoPolicy, ABlockBackFromTheGhostListGoesToTheMainQueue) {
  auto p = make_s3fifo_policy({.small = 0.1, .ghost = 3, .adapt = false});
  fill(*p, 0, 4);
  EXPECT_EQ(p->victim(), 0);
  p->on_remove(0);  // key 100 becomes a ghost
  // The block comes back, in another entry: it was reused after all.
  p->on_insert(7, block(100));
  p->on_release(7);
  fill(*p, 8, 2);
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{1, 2, 3, 8, 9, 7}));
}

TEST(S3FifoPolicy, WithoutAContentKeyNothingIsRemembered) {
  auto p = make_s3fifo_policy({.small = 0.1, .adapt = false});
  p->on_insert(0, block(0));
  p->on_release(0);
  p->on_insert(1, block(0));
  p->on_release(1);
  p->on_remove(0);
  p->on_insert(0, block(0));
  p->on_release(0);
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{1, 0}));
}

TEST(S3FifoPolicy, AHitWhileReferencedCountsAtTheNextRelease) {
  auto p = make_s3fifo_policy({.small = 0.1, .adapt = false});
  p->on_insert(0, block(1));
  p->on_insert(1, block(2));
  p->on_hit(0);  // a second request shares it before its writer is done
  p->on_release(0);
  p->on_release(1);
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{1, 0}));
}

TEST(S3FifoPolicy, ATailReleasedFirstLeavesBeforeItsHead) {
  auto p = make_s3fifo_policy({.small = 0.1, .adapt = false});
  for (EntryId d = 0; d < 4; ++d) p->on_insert(d, block(10 + static_cast<uint64_t>(d), d));
  for (EntryId d = 3; d >= 0; --d) p->on_release(d);  // the pool releases tail first
  EXPECT_EQ(p->eviction_order(), (std::vector<EntryId>{3, 2, 1, 0}));
}

// The small queue's share moves by marginal ghost hits: up when a block
// evicted from the small queue returns soon, down when one from the main
// queue does. Entries 1..5 are in the main queue, 0 and 6..9 in the small one.
std::unique_ptr<EvictionPolicy> two_queues(const S3FifoParams& params) {
  auto p = make_s3fifo_policy(params);
  fill(*p, 0, 10);
  for (EntryId id = 1; id <= 5; ++id) p->on_hit(id), p->on_release(id);
  return p;
}

TEST(S3FifoPolicy, TheSmallQueueGrowsWhenItsEvictionsComeBackSoon) {
  for (const bool adapt : {false, true}) {
    auto p = two_queues({.small = 0.1, .ghost = 3, .window = 1, .step = 5, .adapt = adapt});
    p->on_remove(0);  // the small queue's head, evicted
    p->on_insert(0, block(100));  // back at once: the share grows by 5 / 10
    p->on_release(0);
    // 4 small entries of 10: under a 60% share the main queue goes first.
    EXPECT_EQ(p->victim(), adapt ? 1 : 6) << "adapt " << adapt;
  }
}

TEST(S3FifoPolicy, TheSmallQueueShrinksWhenTheMainQueuesEvictionsComeBackSoon) {
  for (const bool adapt : {false, true}) {
    auto p = two_queues({.small = 0.6, .ghost = 3, .window = 1, .step = 4, .adapt = adapt});
    ASSERT_EQ(p->victim(), 1);  // 5 small entries of 10, under 60%: main first
    p->on_remove(1);
    p->on_insert(1, block(101));  // back at once: the share shrinks by 4 / 10
    p->on_release(1);
    EXPECT_EQ(p->victim(), adapt ? 0 : 2) << "adapt " << adapt;
  }
}

TEST(S3FifoPolicy, ALateReturnStillGoesToTheMainQueueButDoesNotResize) {
  auto p = two_queues({.small = 0.1, .ghost = 3, .window = 0.1, .step = 5});
  p->on_remove(0);
  p->on_remove(6);  // a second small-queue eviction: key 100 is now 2 evictions old, past 0.1 x 9
  p->on_insert(0, block(100));
  p->on_release(0);
  EXPECT_EQ(p->victim(), 7);  // the share stayed at 10%: the small queue still goes first
  const auto order = p->eviction_order();
  EXPECT_EQ(order.back(), 0) << "the returned block is the main queue's newest";
}

TEST(S3FifoPolicy, RefusesParametersOutOfRange) {
  EXPECT_THROW(make_s3fifo_policy({.small = 0}), PolicyError);
  EXPECT_THROW(make_s3fifo_policy({.small = 1}), PolicyError);
  EXPECT_THROW(make_s3fifo_policy({.ghost = -1}), PolicyError);
  EXPECT_THROW(make_s3fifo_policy({.window = 0}), PolicyError);
  try {
    make_s3fifo_policy({.small = 1.5});
    FAIL();
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(), "s3fifo: small must be in (0, 1), got 1.5");
  }
}

}  // namespace
}  // namespace kvgate::policies
