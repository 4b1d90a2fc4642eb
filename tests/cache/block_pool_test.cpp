#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "cache/block_pool.h"
#include "policies/eviction/lru_policy.h"
#include "tests/cache/chain_support.h"

namespace kvgate::cache {
namespace {

using pool_testing::Chain;
using pool_testing::kB;
using pool_testing::make_chain;

const ScopeId kScopeA{1, 0}, kScopeB{2, 0};
// The non-secret label the pool charges a scope's blocks to (tenant 1, 2).
TenantId tenant_of(const ScopeId& s) { return s.lo; }

// Plays a request that missed everything: allocates, fills and commits
// every full block of `c`; returns its blocks (still referenced).
std::vector<BlockId> write_chain(BlockPool& pool, const ScopeId& scope, const Chain& c) {
  std::vector<BlockId> blocks;
  for (size_t i = 0; i < c.hashes.size(); ++i) {
    auto b = pool.allocate(tenant_of(scope));
    EXPECT_TRUE(b.has_value());
    blocks.push_back(*b);
    BlockKey key{c.hashes[i], i == 0 ? c.seed : c.hashes[i - 1], scope, static_cast<int32_t>(i)};
    EXPECT_TRUE(pool.commit(*b, key, std::span(c.tokens).subspan(i * kB, kB)));
  }
  return blocks;
}

void release_tail_first(BlockPool& pool, std::vector<BlockId> blocks) {
  std::reverse(blocks.begin(), blocks.end());
  pool.release(blocks);
}

TEST(BlockPool, ReleasedBlocksStayCachedAndAreFoundAgain) {
  BlockPool pool(8, kB, 100);
  Chain c = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  auto blocks = write_chain(pool, kScopeA, c);
  ASSERT_EQ(blocks.size(), 2u);
  release_tail_first(pool, blocks);
  pool.check_invariants();
  CacheStats st = pool.stats();
  EXPECT_EQ(st.blocks_cached_free, 2);
  EXPECT_EQ(st.blocks_free, 6);
  EXPECT_EQ(st.blocks_in_use, 0);

  auto hits = pool.lookup(kScopeA, c.seed, c.hashes, c.tokens);
  EXPECT_EQ(hits, blocks);
  for (BlockId b : hits) EXPECT_EQ(pool.ref_count(b), 1);
  EXPECT_EQ(pool.stats().blocks_in_use, 2);
  pool.check_invariants();
}

TEST(BlockPool, LookupStopsAtTheFirstMissingBlock) {
  BlockPool pool(8, kB, 100);
  Chain c = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  auto blocks = write_chain(pool, kScopeA, c);
  release_tail_first(pool, blocks);
  Chain d = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 99, 9, 10, 11, 12});  // differs in block 1
  auto hits = pool.lookup(kScopeA, d.seed, d.hashes, d.tokens);
  EXPECT_EQ(hits, std::vector<BlockId>{blocks[0]});
}

TEST(BlockPool, IdenticalTokensUnderAnotherScopeNeverMatch) {
  BlockPool pool(8, kB, 100);
  Chain a = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  release_tail_first(pool, write_chain(pool, kScopeA, a));
  Chain b = make_chain(kScopeB, a.tokens);
  EXPECT_TRUE(pool.lookup(kScopeB, b.seed, b.hashes, b.tokens).empty());
  // Even handed scope A's own hashes, scope B is refused: each block records its scope.
  EXPECT_TRUE(pool.lookup(kScopeB, a.seed, a.hashes, a.tokens).empty());
  EXPECT_EQ(pool.lookup(kScopeA, a.seed, a.hashes, a.tokens).size(), 2u);
}

TEST(BlockPool, ForcedCollisionsAreMisses) {
  BlockPool pool(8, kB, 100);
  Chain a = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  release_tail_first(pool, write_chain(pool, kScopeA, a));
  // Same hashes, different tokens in block 0.
  std::vector<TokenId> other_tokens{1, 2, 3, 5, 5, 6, 7, 8};
  EXPECT_TRUE(pool.lookup(kScopeA, a.seed, a.hashes, other_tokens).empty());
  // Same hash and tokens for block 1, but reached from another (cached,
  // verified) block 0: the same tokens under another salt.
  Chain e = make_chain(kScopeA, a.tokens, "salt");
  release_tail_first(pool, write_chain(pool, kScopeA, e));
  std::vector<BlockHash> other_parent{e.hashes[0], a.hashes[1]};
  auto hits = pool.lookup(kScopeA, e.seed, other_parent, a.tokens);
  EXPECT_EQ(hits.size(), 1u);
  pool.release(hits);
  // Block 0's hash under another seed (its recorded parent).
  EXPECT_TRUE(pool.lookup(kScopeA, {5, 5}, a.hashes, a.tokens).empty());
  // Block 0's hash asked for at depth 1 (a chain whose two links collide).
  std::vector<BlockHash> repeated{a.hashes[0], a.hashes[0]};
  std::vector<TokenId> twice{1, 2, 3, 4, 1, 2, 3, 4};
  hits = pool.lookup(kScopeA, a.seed, repeated, twice);
  EXPECT_EQ(hits.size(), 1u);
  pool.release(hits);
  pool.check_invariants();
}

TEST(BlockPool, DuplicateCommitLeavesTheBlockPrivate) {
  BlockPool pool(8, kB, 100);
  Chain c = make_chain(kScopeA, {1, 2, 3, 4});
  auto first = write_chain(pool, kScopeA, c);
  auto b = pool.allocate(tenant_of(kScopeA));
  ASSERT_TRUE(b);
  EXPECT_FALSE(pool.commit(*b, {c.hashes[0], c.seed, kScopeA, 0}, c.tokens));
  EXPECT_FALSE(pool.is_cached(*b));
  pool.release({&*b, 1});
  EXPECT_EQ(pool.stats().blocks_free, 7);  // the duplicate went straight back
  release_tail_first(pool, first);
  pool.check_invariants();
}

TEST(BlockPool, EvictsTheTailOfAReleasedChainFirst) {
  BlockPool pool(4, kB, 100);
  Chain c = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  auto blocks = write_chain(pool, kScopeA, c);  // all four blocks
  release_tail_first(pool, blocks);
  auto b = pool.allocate(tenant_of(kScopeB));
  ASSERT_TRUE(b);
  EXPECT_EQ(*b, blocks[3]);
  EXPECT_EQ(pool.lookup(kScopeA, c.seed, c.hashes, c.tokens).size(), 3u);  // the head survives
  EXPECT_EQ(pool.stats().all.evictions, 1);
  pool.check_invariants();
}

TEST(BlockPool, AllocateFailsRatherThanEvictReferencedBlocks) {
  BlockPool pool(2, kB, 100);
  Chain c = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  auto blocks = write_chain(pool, kScopeA, c);
  EXPECT_EQ(pool.allocate(tenant_of(kScopeA)), std::nullopt);
  pool.release({&blocks[1], 1});
  EXPECT_EQ(pool.allocate(tenant_of(kScopeA)), blocks[1]);
  EXPECT_EQ(pool.allocate(tenant_of(kScopeA)), std::nullopt);
}

// A policy that names a referenced block: the pool must refuse it.
class RogueLru final : public policies::EvictionPolicy {
 public:
  std::string_view name() const override { return "rogue"; }
  void on_insert(policies::EntryId, const policies::EntryInfo&) override {}
  void on_hit(policies::EntryId) override {}
  void on_release(policies::EntryId) override { ++candidates_; }
  void on_remove(policies::EntryId) override {}
  std::optional<policies::EntryId> victim() const override { return 0; }
  int64_t candidates() const override { return candidates_; }
  std::vector<policies::EntryId> eviction_order() const override { return {0}; }
  int64_t candidates_ = 0;
};

TEST(BlockPool, RefusesAVictimThatIsReferenced) {
  BlockPool pool(2, kB, 100, std::make_unique<RogueLru>());
  Chain c = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  auto blocks = write_chain(pool, kScopeA, c);  // block 0 referenced
  pool.release({&blocks[1], 1});                 // block 1 evictable
  EXPECT_THROW(pool.allocate(tenant_of(kScopeA)), std::logic_error);
  EXPECT_EQ(pool.ref_count(blocks[0]), 1);
  EXPECT_TRUE(pool.is_cached(blocks[0]));
}

struct EventLog final : BlockEventListener {
  void on_block_event(const BlockEvent& e) override {
    events.push_back(e);
    if (pool && e.kind == BlockEventKind::kRemoved) {
      EXPECT_EQ(pool->ref_count(e.block), 0);
    }
  }
  const BlockPool* pool = nullptr;
  std::vector<BlockEvent> events;
};

TEST(BlockPool, EmitsStoredAndRemovedEvents) {
  BlockPool pool(2, kB, 100);
  EventLog log;
  log.pool = &pool;
  pool.set_listener(&log);
  Chain c = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  release_tail_first(pool, write_chain(pool, kScopeA, c));
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].kind, BlockEventKind::kStored);
  EXPECT_EQ(log.events[0].hash, c.hashes[0]);
  EXPECT_EQ(log.events[0].parent, BlockHash{});  // the seed stays in the pool
  EXPECT_EQ(log.events[0].tenant, tenant_of(kScopeA));
  EXPECT_EQ(log.events[1].parent, c.hashes[0]);
  EXPECT_EQ(log.events[1].depth, 1);
  ASSERT_TRUE(pool.allocate(tenant_of(kScopeB)));
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_EQ(log.events[2].kind, BlockEventKind::kRemoved);
  EXPECT_EQ(log.events[2].hash, c.hashes[1]);
}

// Invariant 7: an event carries the scope-chained hashes and the tenant's
// label, never the secret scope, the chain seed derived from it, or the
// block's token ids. Searches every event's bytes for each of them.
TEST(BlockPool, EventsCarryNoScopeSeedOrTokens) {
  const ScopeId scope{0x5ec7e75c0be5ec7eull, 0x0123456789abcdefull};
  BlockPool pool(4, kB, 100);
  EventLog log;
  pool.set_listener(&log);
  Chain c = make_chain(scope, {70001, 70002, 70003, 70004, 70005, 70006, 70007, 70008});
  std::vector<BlockId> blocks;
  for (size_t i = 0; i < c.hashes.size(); ++i) {
    blocks.push_back(*pool.allocate(7));
    pool.commit(blocks.back(), {c.hashes[i], i == 0 ? c.seed : c.hashes[i - 1], scope, static_cast<int32_t>(i)},
                std::span(c.tokens).subspan(i * kB, kB));
  }
  ASSERT_EQ(log.events.size(), 2u);
  auto contains = [](const BlockEvent& e, const void* needle, size_t n) {
    const auto* hay = reinterpret_cast<const unsigned char*>(&e);
    return std::search(hay, hay + sizeof e, static_cast<const unsigned char*>(needle),
                       static_cast<const unsigned char*>(needle) + n) != hay + sizeof e;
  };
  for (const BlockEvent& e : log.events) {
    EXPECT_FALSE(contains(e, &scope.lo, 8)) << "the secret scope is in an event";
    EXPECT_FALSE(contains(e, &scope.hi, 8)) << "the secret scope is in an event";
    EXPECT_FALSE(contains(e, &c.seed.lo, 8)) << "the chain seed is in an event";
    for (TokenId t : c.tokens) EXPECT_FALSE(contains(e, &t, sizeof t)) << "token " << t << " is in an event";
    EXPECT_EQ(e.tenant, 7u);
  }
  release_tail_first(pool, blocks);
}

TEST(BlockPool, CountsPerTenantLabel) {
  BlockPool pool(8, kB, 100);
  Chain a = make_chain(kScopeA, {1, 2, 3, 4, 5, 6, 7, 8});
  auto held = write_chain(pool, kScopeA, a);
  Chain b = make_chain(kScopeB, {1, 2, 3, 4});
  release_tail_first(pool, write_chain(pool, kScopeB, b));
  pool.record_query(tenant_of(kScopeA), 10, 8);
  pool.record_query(tenant_of(kScopeA), 5, 0);
  CacheStats st = pool.stats();
  ASSERT_EQ(st.tenants.size(), 2u);
  EXPECT_EQ(st.tenants[0].first, tenant_of(kScopeA));
  const TenantCacheStats& sa = st.tenants[0].second;
  EXPECT_EQ(sa.query_tokens, 15);
  EXPECT_EQ(sa.hit_tokens, 8);
  EXPECT_EQ(sa.blocks_in_use, 2);
  EXPECT_EQ(sa.blocks_stored, 2);
  const TenantCacheStats& sb = st.tenants[1].second;
  EXPECT_EQ(sb.blocks_in_use, 0);
  EXPECT_EQ(sb.blocks_cached_free, 1);
  EXPECT_EQ(st.all.blocks_stored, 3);
  EXPECT_EQ(st.blocks_in_use, 2);
  EXPECT_EQ(st.blocks_cached_free, 1);
  EXPECT_EQ(st.blocks_free, 5);
  release_tail_first(pool, held);
}

// Random request lifecycles over a tiny pool with a small alphabet, so that
// prefixes are shared, duplicates are committed and blocks are evicted all
// the time. After every operation: the invariants hold, and no block that a
// live request holds was evicted or changed its key.
TEST(BlockPool, RandomOperationsNeverEvictAReferencedBlock) {
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    std::mt19937 rng(seed);
    BlockPool pool(10, kB, 100);
    EventLog log;
    log.pool = &pool;
    pool.set_listener(&log);
    struct Live {
      std::vector<BlockId> blocks;
      std::vector<std::pair<bool, BlockKey>> keys;  // cached when taken, and under which key
    };
    std::vector<Live> live;
    const std::vector<std::vector<TokenId>> prefixes{{1, 1, 2, 2}, {1, 1, 2, 2, 3, 3, 4, 4}, {5, 6, 7, 8}};
    for (int op = 0; op < 2000; ++op) {
      const int kind = static_cast<int>(rng() % 3);
      if (kind < 2 || live.empty()) {
        const ScopeId scope = rng() % 4 == 0 ? kScopeB : kScopeA;
        std::vector<TokenId> toks = prefixes[rng() % prefixes.size()];
        for (uint32_t n = rng() % 9; n > 0; --n) toks.push_back(static_cast<TokenId>(rng() % 3));
        Chain c = make_chain(scope, toks);
        Live l;
        l.blocks = pool.lookup(scope, c.seed, c.hashes, c.tokens);
        for (BlockId b : l.blocks) l.keys.push_back({true, pool.key(b)});
        bool ok = true;
        for (size_t i = l.blocks.size(); i < (toks.size() + kB - 1) / kB; ++i) {
          auto b = pool.allocate(tenant_of(scope));
          if (!b) {
            ok = false;
            break;
          }
          l.blocks.push_back(*b);
          bool cached = false;
          BlockKey key{};
          if (i < c.hashes.size()) {  // full: commit, as the engine does once it is written
            key = {c.hashes[i], i == 0 ? c.seed : c.hashes[i - 1], scope, static_cast<int32_t>(i)};
            cached = pool.commit(*b, key, std::span(c.tokens).subspan(i * kB, kB));
          }
          l.keys.push_back({cached, key});
        }
        if (ok)
          live.push_back(std::move(l));
        else
          release_tail_first(pool, l.blocks);
      } else {
        const size_t i = rng() % live.size();
        release_tail_first(pool, live[i].blocks);
        live.erase(live.begin() + static_cast<ptrdiff_t>(i));
      }
      pool.check_invariants();
      for (const Live& l : live)
        for (size_t i = 0; i < l.blocks.size(); ++i) {
          ASSERT_GE(pool.ref_count(l.blocks[i]), 1);
          ASSERT_EQ(pool.is_cached(l.blocks[i]), l.keys[i].first);
          if (l.keys[i].first) {
            ASSERT_EQ(pool.key(l.blocks[i]).hash, l.keys[i].second.hash);
          }
        }
    }
    EXPECT_GT(pool.stats().all.evictions, 0) << "the workload should force evictions";
    EXPECT_GT(pool.stats().all.blocks_stored, 0);
    for (Live& l : live) release_tail_first(pool, l.blocks);
    EXPECT_EQ(pool.stats().blocks_in_use, 0);
    pool.check_invariants();
  }
}

}  // namespace
}  // namespace kvgate::cache
