// The replay through the pool, checked three ways: hand-computed hit rates
// on tiny traces, an independent naive simulator of the same model (LRU and
// Belady, O(capacity) per eviction) on random prefix-tree traces, and a
// brute-force optimum where Belady is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "base/error.h"
#include "gateway/tools/sim/replay.h"
#include "policies/eviction/policy_error.h"

namespace kvgate::sim {
namespace {

using policies::Tier;

ReplayTrace trace_of(const std::vector<std::pair<int64_t, std::vector<int32_t>>>& requests) {
  ReplayTrace t;
  for (const auto& [tokens, chain] : requests) t.add(tokens, chain);
  return t;
}

ReplayResult run(const ReplayTrace& t, const std::string& policy, std::vector<TierSpec> tiers, int32_t repeat = 1) {
  return replay(t, {std::move(tiers), policies::parse_policy_spec(policy), {}, repeat, 0.02});
}
ReplayResult run(const ReplayTrace& t, const std::string& policy, int64_t capacity) {
  return run(t, policy, {{Tier::kDevice, capacity}});
}

TEST(Replay, LruByHand) {
  // r0 misses both; r1 hits 0; after r1 the LRU order is 1, 2, 0 (each
  // request released tail first), so at capacity 2 block 1 goes and r2 hits
  // only 0; at capacity 3 nothing goes and r2 hits 0 and 1.
  const ReplayTrace t = trace_of({{1024, {0, 1}}, {700, {0, 2}}, {1500, {0, 1, 3}}});
  const ReplayResult two = run(t, "lru", 2);
  EXPECT_EQ(two.tokens, 3224);
  EXPECT_EQ(two.hit_tokens, 1024);
  EXPECT_EQ(two.blocks, 7);
  EXPECT_EQ(two.hit_blocks, 2);
  // 1 after r1; after r2 the order is 2, 3, 1, 0 (r2 released 3, 1, 0): 2 and 3 go.
  EXPECT_EQ(two.evictions, 3);
  const ReplayResult three = run(t, "lru", 3);
  EXPECT_EQ(three.hit_tokens, 512 + 1024);
  EXPECT_EQ(three.hit_blocks, 3);
  EXPECT_NEAR(three.token_rate(), 100.0 * 1536 / 3224, 1e-9);
}

TEST(Replay, TheLastBlockCountsItsRemainderOnly) {
  const ReplayTrace t = trace_of({{600, {0, 1}}, {600, {0, 1}}});
  const ReplayResult r = run(t, "lru", 10);
  EXPECT_EQ(r.hit_tokens, 600);
  EXPECT_EQ(r.hit_blocks, 2);
  // Prefill-weighted: 512 x 1 + 88 x 1.02 of 2 x that.
  EXPECT_NEAR(r.prefill_rate(), 50.0, 1e-9);
}

// --- An independent simulator of the same model -------------------------

// Hits are the longest cached prefix; then each block is touched tail
// first (hits and new blocks; a block cached past the first miss stays as
// it was, as in the pool); then the cache evicts down to the capacity.
// `rank` orders victims: the largest goes first.
struct NaiveCache {
  struct Block {
    int32_t depth;
    int64_t stamp, next_use;
  };
  std::map<int32_t, Block> cached;
};

int64_t naive_hits(const ReplayTrace& t, int64_t capacity, bool belady, int64_t* hit_blocks = nullptr) {
  // next[r][i]: the next request holding chain(r)[i], or INT64_MAX.
  std::vector<std::vector<int64_t>> next(static_cast<size_t>(t.requests()));
  std::map<int32_t, int64_t> seen;
  for (int64_t r = t.requests() - 1; r >= 0; --r) {
    for (int32_t id : t.chain(r)) next[r].push_back(seen.contains(id) ? seen[id] : INT64_MAX);
    for (int32_t id : t.chain(r)) seen[id] = r;
  }
  NaiveCache c;
  int64_t clock = 0, hits = 0, blocks = 0;
  for (int64_t r = 0; r < t.requests(); ++r) {
    const auto chain = t.chain(r);
    size_t k = 0;
    while (k < chain.size() && c.cached.contains(chain[k])) ++k;
    std::vector<bool> touched(chain.size(), false);
    for (size_t i = 0; i < chain.size(); ++i) {
      if (i < k) hits += t.block_tokens(r, i), ++blocks, touched[i] = true;
      else if (!c.cached.contains(chain[i])) c.cached[chain[i]] = {static_cast<int32_t>(i), 0, 0}, touched[i] = true;
    }
    for (size_t i = chain.size(); i-- > 0;)
      if (touched[i]) c.cached[chain[i]].stamp = ++clock, c.cached[chain[i]].next_use = next[r][i];
    while (static_cast<int64_t>(c.cached.size()) > capacity) {
      auto victim = c.cached.begin();
      for (auto it = c.cached.begin(); it != c.cached.end(); ++it) {
        const auto& [id, b] = *it;
        const auto& [vid, vb] = *victim;
        const bool first = belady ? std::tie(b.next_use, b.depth, vid) > std::tie(vb.next_use, vb.depth, id)
                                  : b.stamp < vb.stamp;
        if (first) victim = it;
      }
      c.cached.erase(victim);
    }
  }
  if (hit_blocks) *hit_blocks = blocks;
  return hits;
}

// Random prefix trees: a request continues an earlier one (a prefix of it
// and maybe new blocks), or starts from the shared block 0, or from nothing.
ReplayTrace random_trace(uint32_t seed, int requests, int max_new) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int32_t>> chains;
  int32_t next_id = 1;
  ReplayTrace t;
  for (int r = 0; r < requests; ++r) {
    std::vector<int32_t> c;
    const uint32_t kind = rng() % 10;
    if (!chains.empty() && kind < 6) {
      const auto& from = chains[rng() % chains.size()];
      c.assign(from.begin(), from.begin() + 1 + static_cast<long>(rng() % from.size()));
    } else if (kind < 8) {
      c.push_back(0);
    }
    const int add = static_cast<int>(rng() % (max_new + 1));
    for (int i = 0; i < add || c.empty(); ++i) c.push_back(next_id++);
    chains.push_back(c);
    const auto n = static_cast<int64_t>(c.size());
    t.add(512 * (n - 1) + 1 + static_cast<int64_t>(rng() % 512), c);
  }
  return t;
}

TEST(Replay, LruThroughThePoolIsANaiveLru) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const ReplayTrace t = random_trace(seed, 60, 4);
    for (int64_t capacity : {1, 2, 3, 5, 8, 13, 40}) {
      int64_t blocks = 0;
      const int64_t want = naive_hits(t, capacity, false, &blocks);
      const ReplayResult got = run(t, "lru", capacity);
      ASSERT_EQ(got.hit_tokens, want) << "seed " << seed << " capacity " << capacity;
      ASSERT_EQ(got.hit_blocks, blocks) << "seed " << seed << " capacity " << capacity;
    }
  }
}

TEST(Replay, BeladyThroughThePoolIsTheReferenceOpt) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const ReplayTrace t = random_trace(seed, 60, 4);
    for (int64_t capacity : {1, 2, 3, 5, 8, 13, 40}) {
      const int64_t want = naive_hits(t, capacity, true);
      ASSERT_EQ(run(t, "belady", capacity).hit_tokens, want) << "seed " << seed << " capacity " << capacity;
    }
  }
}

// The best any eviction choice can do, by trying them all: after each
// request the cache keeps any `capacity` of what it holds.
int64_t brute_force_best(const ReplayTrace& t, int64_t capacity) {
  std::map<std::pair<int64_t, std::set<int32_t>>, int64_t> memo;
  std::function<int64_t(int64_t, const std::set<int32_t>&)> best = [&](int64_t r, const std::set<int32_t>& cached) -> int64_t {
    if (r == t.requests()) return 0;
    if (auto it = memo.find({r, cached}); it != memo.end()) return it->second;
    const auto chain = t.chain(r);
    size_t k = 0;
    int64_t hits = 0;
    while (k < chain.size() && cached.contains(chain[k])) hits += t.block_tokens(r, k), ++k;
    std::set<int32_t> all = cached;
    all.insert(chain.begin(), chain.end());
    std::vector<int32_t> pool(all.begin(), all.end());
    int64_t top = 0;
    const auto keep = std::min<int64_t>(capacity, static_cast<int64_t>(pool.size()));
    std::vector<bool> pick(pool.size(), false);
    std::fill(pick.begin(), pick.begin() + keep, true);
    do {
      std::set<int32_t> next;
      for (size_t i = 0; i < pool.size(); ++i)
        if (pick[i]) next.insert(pool[i]);
      top = std::max(top, best(r + 1, next));
    } while (std::prev_permutation(pick.begin(), pick.end()));
    return memo[{r, cached}] = hits + top;
  };
  return best(0, {});
}

TEST(Replay, BeladyIsOptimalForSingleBlockRequests) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    ReplayTrace t;
    for (int r = 0; r < 14; ++r) {
      const int32_t id = static_cast<int32_t>(rng() % 6);
      t.add(512, std::vector<int32_t>{id});
    }
    for (int64_t capacity : {1, 2, 3}) {
      const int64_t best = brute_force_best(t, capacity);
      ASSERT_EQ(run(t, "belady", capacity).hit_tokens, best) << "seed " << seed << " capacity " << capacity;
      ASSERT_LE(run(t, "lru", capacity).hit_tokens, best);
      ASSERT_LE(run(t, "s3fifo", capacity).hit_tokens, best);
    }
  }
}

TEST(Replay, WithChainsNoPolicyBeatsTheBruteForceBest) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const ReplayTrace t = random_trace(seed, 9, 2);
    for (int64_t capacity : {2, 3}) {
      const int64_t best = brute_force_best(t, capacity);
      for (const char* policy : {"belady", "lru", "s3fifo", "cost"})
        ASSERT_LE(run(t, policy, capacity).hit_tokens, best) << policy << " seed " << seed;
    }
  }
}

// --- Policies through the pool -------------------------------------------

TEST(Replay, S3FifoRecognisesABlockThatComesBackThroughItsContentKey) {
  // Block 1 recurs; at capacity 2 it is evicted from the small queue the
  // first time, comes back as a ghost (so into the main queue) and then
  // outlives the one-off blocks 4, 5 and 6. Without ghosts it never hits.
  const ReplayTrace t = trace_of({{512, {1}}, {512, {2}}, {512, {3}}, {512, {1}}, {512, {4}}, {512, {5}}, {512, {6}}, {512, {1}}});
  EXPECT_EQ(run(t, "s3fifo:adapt=0", 2).hit_blocks, 1);
  EXPECT_EQ(run(t, "s3fifo:adapt=0,ghost=0", 2).hit_blocks, 0);
  EXPECT_EQ(run(t, "lru", 2).hit_blocks, 0);
}

TEST(Replay, EveryOnlinePolicyReplays) {
  const ReplayTrace t = random_trace(7, 200, 5);
  for (const auto& info : policies::eviction_policies()) {
    const ReplayResult r = run(t, info.name, 10);
    EXPECT_EQ(r.requests, 200);
    EXPECT_GE(r.hit_tokens, 0);
    EXPECT_LE(r.hit_tokens, naive_hits(t, 1 << 20, false)) << info.name;  // nothing beats an unbounded cache
  }
}

// --- Tiers ---------------------------------------------------------------

TEST(Replay, AHostTierCatchesTheDevicesVictims) {
  // Device 1, host 1, LRU. r1 pushes 0 to the host; r2 finds it there (a
  // host hit, copied up), pushing 1 to the host, which drops 0 (its oldest);
  // r3 finds 1 on the host.
  const ReplayTrace t = trace_of({{512, {0}}, {512, {1}}, {512, {0}}, {512, {1}}});
  const ReplayResult r = run(t, "lru", {{Tier::kDevice, 1}, {Tier::kHost, 1}});
  ASSERT_EQ(r.tiers.size(), 2u);
  EXPECT_EQ(r.tiers[0].blocks, 0);
  EXPECT_EQ(r.tiers[1].blocks, 2);
  EXPECT_EQ(r.hit_blocks, 2);
  EXPECT_NEAR(r.tier_token_rate(1), 50.0, 1e-9);
}

TEST(Replay, ADiskTierCatchesTheHostsVictims) {
  const ReplayTrace t = trace_of({{512, {0}}, {512, {1}}, {512, {2}}, {512, {0}}});
  const ReplayResult r = run(t, "lru", {{Tier::kDevice, 1}, {Tier::kHost, 1}, {Tier::kDisk, 1}});
  EXPECT_EQ(r.tiers[0].blocks, 0);
  EXPECT_EQ(r.tiers[1].blocks, 0);
  EXPECT_EQ(r.tiers[2].blocks, 1);
}

TEST(Replay, APrefixGoesOnFromTheDeviceIntoTheHost) {
  // Device 2, host 4, LRU. After r1 the device holds 3, 4 and the host 2, 1,
  // 0; r2 finds all of 0, 1, 2 on the host. After r2 the device keeps 0, 1
  // and the host (dropping 0) 1, 4, 3, 2; r3 hits 0, 1 on the device and 2
  // on the host.
  const ReplayTrace t = trace_of({{1536, {0, 1, 2}}, {1024, {3, 4}}, {1536, {0, 1, 2}}, {1536, {0, 1, 2}}});
  const ReplayResult r = run(t, "lru", {{Tier::kDevice, 2}, {Tier::kHost, 4}});
  EXPECT_EQ(r.tiers[0].tokens, 1024);
  EXPECT_EQ(r.tiers[1].tokens, 1536 + 512);
  EXPECT_EQ(r.hit_tokens, r.tiers[0].tokens + r.tiers[1].tokens);
}

TEST(Replay, TiersNeverLoseWhatOneTierOfTheirTotalSizeWouldKeepUnderBelady) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const ReplayTrace t = random_trace(seed, 80, 3);
    const ReplayResult tiers = run(t, "belady", {{Tier::kDevice, 4}, {Tier::kHost, 8}});
    const ReplayResult device = run(t, "belady", 4);
    EXPECT_GE(tiers.hit_tokens, device.hit_tokens) << "seed " << seed;
  }
}

// --- Repeat and errors ---------------------------------------------------

TEST(Replay, RepeatedCopiesHaveTheirOwnBlocks) {
  const ReplayTrace t = random_trace(3, 50, 3);
  const ReplayResult once = run(t, "lru", {{Tier::kDevice, 5000}}, 1);
  const ReplayResult thrice = run(t, "lru", {{Tier::kDevice, 5000}}, 3);
  EXPECT_EQ(thrice.requests, 150);
  EXPECT_EQ(thrice.hit_tokens, 3 * once.hit_tokens);  // no copy hits another's blocks
  EXPECT_EQ(run(t, "belady", {{Tier::kDevice, 6}}, 2).requests, 100);
}

TEST(Replay, BadConfigurationsAreErrors) {
  const ReplayTrace t = trace_of({{512, {0}}});
  EXPECT_THROW(run(t, "lru", 0), Error);
  EXPECT_THROW(run(t, "lru", {{Tier::kHost, 4}}), Error);
  EXPECT_THROW(run(t, "lru", {{Tier::kDevice, 4}, {Tier::kDisk, 4}, {Tier::kHost, 4}}), Error);
  EXPECT_THROW(run(t, "lru", {{Tier::kDevice, 4}}, 0), Error);
  EXPECT_THROW(replay(t, {{{Tier::kDevice, 4}}, {"nope", {}}, {}, 1, 0.02}), policies::PolicyError);
}

}  // namespace
}  // namespace kvgate::sim
