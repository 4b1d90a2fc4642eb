// Tenant-fair sharing in a real pool: a quiet tenant's working set survives
// another tenant's flood of never-reused prefixes under "fair", where LRU
// gives it up; and the pool's invariants hold throughout.
#include <gtest/gtest.h>

#include <algorithm>

#include "cache/block_hash.h"
#include "cache/block_pool.h"
#include "policies/eviction/policy_registry.h"
#include "tests/cache/chain_support.h"

namespace kvgate::cache {
namespace {

using pool_testing::Chain;
using pool_testing::kB;
using pool_testing::make_chain;

const ScopeId kQuiet{1, 0}, kLoud{2, 0};

// One request: look the chain up, write what missed, release tail first.
// Returns the blocks it found cached.
int32_t serve(BlockPool& pool, const ScopeId& scope, const Chain& c) {
  std::vector<BlockId> table = pool.lookup(scope, c.seed, c.hashes, c.tokens);
  const auto hit = static_cast<int32_t>(table.size());
  for (size_t i = table.size(); i < c.hashes.size(); ++i) {
    const auto b = pool.allocate(scope.lo);
    EXPECT_TRUE(b);
    table.push_back(*b);
    pool.commit(*b, {c.hashes[i], i == 0 ? c.seed : c.hashes[i - 1], scope, static_cast<int32_t>(i)},
                std::span(c.tokens).subspan(i * kB, kB));
  }
  std::reverse(table.begin(), table.end());
  pool.release(table);
  pool.check_invariants();
  return hit;
}

// The quiet tenant reuses two 2-block prompts now and then; the loud one
// sends 200 fresh 2-block prompts. Returns the quiet tenant's hits.
int32_t quiet_hits_under_flood(const char* policy) {
  BlockPool pool(16, kB, 100, policies::make_eviction_policy(policies::parse_policy_spec(policy)));
  const Chain q1 = make_chain(kQuiet, {1, 2, 3, 4, 5, 6, 7, 8});
  const Chain q2 = make_chain(kQuiet, {9, 10, 11, 12, 13, 14, 15, 16});
  serve(pool, kQuiet, q1);
  serve(pool, kQuiet, q2);
  int32_t hits = 0;
  for (int i = 0; i < 200; ++i) {
    const int t = 1000 + 8 * i;
    serve(pool, kLoud, make_chain(kLoud, {t, t + 1, t + 2, t + 3, t + 4, t + 5, t + 6, t + 7}));
    if (i % 20 == 19) hits += serve(pool, kQuiet, q1) + serve(pool, kQuiet, q2);
  }
  return hits;
}

TEST(BlockPoolFairness, AQuietTenantKeepsItsShareWhileAnotherFloods) {
  EXPECT_EQ(quiet_hits_under_flood("fair:base=0"), 40) << "every one of its 10 x 2 x 2 blocks was found";
  EXPECT_EQ(quiet_hits_under_flood("fair"), 40);
  EXPECT_LT(quiet_hits_under_flood("lru"), 40) << "LRU lets the flood push it out";
}

TEST(BlockPoolFairness, SwitchingToFairAndBackWhileBlocksAreHeldLosesNothing) {
  BlockPool pool(16, kB, 100);
  const Chain q = make_chain(kQuiet, {1, 2, 3, 4, 5, 6, 7, 8});
  serve(pool, kQuiet, q);
  std::vector<BlockId> held = pool.lookup(kQuiet, q.seed, q.hashes, q.tokens);
  const int32_t cached = pool.stats().blocks_cached_free;
  for (const char* p : {"fair", "s3fifo", "cost", "lru", "fair:base=2"}) {
    pool.set_policy(policies::make_eviction_policy(policies::parse_policy_spec(p)));
    pool.check_invariants();
    EXPECT_EQ(pool.stats().blocks_cached_free, cached) << p;
    EXPECT_EQ(pool.policy().name(), std::string_view(p).substr(0, std::string_view(p).find(':')));
  }
  std::reverse(held.begin(), held.end());
  pool.release(held);
  EXPECT_EQ(serve(pool, kQuiet, q), 2);
}

}  // namespace
}  // namespace kvgate::cache
