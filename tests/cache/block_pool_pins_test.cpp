// Pins, per-tenant eviction and switching the policy at run time: what an
// operator and a tenant's pinned prefix may do to the pool, and that none of
// it frees a referenced block or loses a cached one it should keep. The pool
// is built with invariant checks, so every call below is also checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "cache/block_hash.h"
#include "cache/block_pool.h"
#include "policies/eviction/lru_policy.h"
#include "tests/cache/chain_support.h"

namespace kvgate::cache {
namespace {

using namespace std::chrono_literals;
using Clock = BlockPool::Clock;

using pool_testing::Chain;
using pool_testing::kB;
using pool_testing::make_chain;

const ScopeId kScopeA{1, 0}, kScopeB{2, 0};
constexpr TenantId kA = 1, kB_ = 2;

// A request that missed everything and has ended: its blocks are cached
// and unreferenced, released tail first.
std::vector<BlockId> cache_chain(BlockPool& pool, const ScopeId& scope, TenantId owner, const Chain& c) {
  std::vector<BlockId> blocks;
  for (size_t i = 0; i < c.hashes.size(); ++i) {
    const auto b = pool.allocate(owner);
    EXPECT_TRUE(b);
    blocks.push_back(*b);
    const BlockKey key{c.hashes[i], i == 0 ? c.seed : c.hashes[i - 1], scope, static_cast<int32_t>(i)};
    EXPECT_TRUE(pool.commit(*b, key, std::span(c.tokens).subspan(i * kB, kB)));
  }
  std::vector<BlockId> tail_first(blocks.rbegin(), blocks.rend());
  pool.release(tail_first);
  return blocks;
}

int32_t hits(BlockPool& pool, const ScopeId& scope, const Chain& c) {
  std::vector<BlockId> got = pool.lookup(scope, c.seed, c.hashes, c.tokens);
  std::reverse(got.begin(), got.end());
  pool.release(got);
  return static_cast<int32_t>(got.size());
}

// Another tenant writes as many fresh one-block chains as the pool has
// blocks: everything evictable turns over.
void flood(BlockPool& pool, int first_token) {
  for (int i = 0; i < pool.num_blocks(); ++i) {
    const int t = first_token + 4 * i;
    cache_chain(pool, kScopeB, kB_, make_chain(kScopeB, {t, t + 1, t + 2, t + 3}));
  }
}

TEST(BlockPoolPins, APinnedPrefixSurvivesPressureUntilItsTtlThenIsEvictable) {
  BlockPool pool(8, kB, 100);
  const Chain c = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto blocks = cache_chain(pool, kScopeA, kA, c);
  const Clock::time_point t0{};
  EXPECT_EQ(pool.pin(blocks, kA, 300s, t0), 2);
  EXPECT_EQ(pool.pinned_blocks(kA), 2);
  EXPECT_EQ(pool.available(), 6) << "pinned blocks are not evictable";

  flood(pool, 1000);  // every other block turns over
  EXPECT_EQ(hits(pool, kScopeA, c), 2) << "the pin kept the prefix";

  EXPECT_EQ(pool.expire_pins(t0 + 299s), 0);
  EXPECT_EQ(pool.expire_pins(t0 + 300s), 2);
  EXPECT_EQ(pool.pinned_blocks(kA), 0);
  EXPECT_TRUE(pool.is_cached(blocks[0])) << "after its TTL it is an ordinary cached block";
  flood(pool, 2000);
  EXPECT_EQ(hits(pool, kScopeA, c), 0) << "and pressure can now take it";
}

TEST(BlockPoolPins, AHitRefreshesThePinAndAPinIsCountedOnce) {
  BlockPool pool(8, kB, 100);
  const Chain c = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto blocks = cache_chain(pool, kScopeA, kA, c);
  const Clock::time_point t0{};
  pool.pin(blocks, kA, 300s, t0);
  EXPECT_EQ(pool.unpinned_among(blocks), 0);
  EXPECT_EQ(pool.pin(blocks, kA, 300s, t0 + 10s), 0) << "pinning again only extends";
  EXPECT_EQ(pool.pinned_blocks(kA), 2);

  std::vector<BlockId> got = pool.lookup(kScopeA, c.seed, c.hashes, c.tokens);
  pool.refresh_pins(got, t0 + 200s);
  std::reverse(got.begin(), got.end());
  pool.release(got);
  EXPECT_EQ(pool.expire_pins(t0 + 300s), 0) << "the hit at 200 s moved the expiry to 500 s";
  EXPECT_EQ(pool.expire_pins(t0 + 500s), 2);
  EXPECT_EQ(pool.stats().blocks_pinned, 0);
}

TEST(BlockPoolPins, FlushingATenantDropsOnlyItsUnreferencedBlocksAndWithPinsItsPins) {
  BlockPool pool(16, kB, 100);
  const Chain a = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  const Chain a2 = make_chain(kScopeA, {9, 9, 9, 9});
  const Chain b = make_chain(kScopeB, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto pinned = cache_chain(pool, kScopeA, kA, a);
  cache_chain(pool, kScopeA, kA, a2);
  cache_chain(pool, kScopeB, kB_, b);
  pool.pin(pinned, kA, 300s, Clock::time_point{});
  std::vector<BlockId> held = pool.lookup(kScopeA, a2.seed, a2.hashes, a2.tokens);  // a running request
  ASSERT_EQ(held.size(), 1u);

  BlockPool::TenantEviction e = pool.evict_tenant(kA, false);
  EXPECT_EQ(e.evicted, 0) << "A's cached blocks are pinned or held";
  EXPECT_EQ(e.unpinned, 0);
  e = pool.evict_tenant(kA, true);
  EXPECT_EQ(e.unpinned, 2);
  EXPECT_EQ(e.evicted, 2);
  EXPECT_TRUE(pool.is_cached(held[0])) << "a referenced block is never evicted";
  EXPECT_EQ(pool.ref_count(held[0]), 1);
  EXPECT_EQ(hits(pool, kScopeA, a), 0);
  EXPECT_EQ(hits(pool, kScopeB, b), 2) << "another tenant's blocks are untouched";
  pool.release(held);
  EXPECT_EQ(pool.cached_blocks(kA), 1);
  EXPECT_TRUE(pool.evict_one_of(kA));
  EXPECT_FALSE(pool.evict_one_of(kA));
  EXPECT_EQ(pool.cached_blocks(kA), 0);
}

TEST(BlockPoolPins, SwitchingThePolicyKeepsEveryCachedBlockAndTheOrder) {
  BlockPool pool(6, kB, 100);
  const Chain first = make_chain(kScopeA, {1, 2, 3, 4});
  const Chain second = make_chain(kScopeA, {5, 6, 7, 8});
  const Chain held = make_chain(kScopeA, {9, 10, 11, 12});
  cache_chain(pool, kScopeA, kA, first);
  cache_chain(pool, kScopeA, kA, second);
  cache_chain(pool, kScopeA, kA, held);
  std::vector<BlockId> running = pool.lookup(kScopeA, held.seed, held.hashes, held.tokens);
  const std::vector<policies::EntryId> before = pool.policy().eviction_order();

  pool.set_policy(policies::make_lru_policy());
  EXPECT_EQ(pool.policy().eviction_order(), before);
  EXPECT_EQ(pool.policy().candidates(), 2);
  EXPECT_EQ(pool.stats().blocks_cached_free, 2);
  // Under the new policy the oldest goes first, and the held block is no candidate.
  flood(pool, 1000);
  EXPECT_EQ(hits(pool, kScopeA, first), 0);
  EXPECT_EQ(hits(pool, kScopeA, second), 0);
  EXPECT_EQ(pool.ref_count(running[0]), 1);
  pool.release(running);
  EXPECT_EQ(pool.policy().candidates(), pool.stats().blocks_cached_free);
}

}  // namespace
}  // namespace kvgate::cache
