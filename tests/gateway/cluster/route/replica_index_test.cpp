// ReplicaIndex: events in any order, removal, tier moves, cleared, the
// shared tier, more than 64 replicas, sequence numbers; a random run
// against a model of one set per replica and tier (lookup_exact, and
// lookup's overcount only); lookup's search against the exact walk on
// prefix-shaped holdings, and across a hole.
#include "gateway/cluster/route/replica_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <random>
#include <set>
#include <vector>

#include "gateway/cluster/route/route_error.h"

namespace kvgate::route {
namespace {

using policies::Tier;

cache::BlockHash h(uint64_t i) { return {i * 0x9e3779b97f4a7c15ull + 1, i}; }

std::vector<cache::BlockHash> chain(uint64_t first, int n) {
  std::vector<cache::BlockHash> c;
  for (int i = 0; i < n; ++i) c.push_back(h(first + static_cast<uint64_t>(i)));
  return c;
}

std::vector<Residency> lookup(const ReplicaIndex& idx, const std::vector<cache::BlockHash>& c) {
  std::vector<Residency> out(static_cast<size_t>(idx.replica_slots()));
  idx.lookup(c, out);
  return out;
}

std::vector<Residency> lookup_exact(const ReplicaIndex& idx, const std::vector<cache::BlockHash>& c) {
  std::vector<Residency> out(static_cast<size_t>(idx.replica_slots()));
  idx.lookup_exact(c, out);
  return out;
}

TEST(ReplicaIndex, CountsTheLeadingBlocksEachReplicaHoldsByTier) {
  ReplicaIndex idx(4);
  const ReplicaId a = idx.add_replica(), b = idx.add_replica();
  const auto c = chain(100, 6);
  for (int i = 0; i < 4; ++i) idx.stored(a, c[static_cast<size_t>(i)], Tier::kDevice);
  idx.stored(a, c[4], Tier::kHost);
  idx.stored(a, c[5], Tier::kDisk);
  idx.stored(b, c[0], Tier::kHost);
  idx.stored(b, c[2], Tier::kDevice);  // after a gap: not a prefix
  const auto out = lookup(idx, c);
  EXPECT_EQ(out[a], (Residency{4, 1, 1, 0}));
  EXPECT_EQ(out[b], (Residency{0, 1, 0, 0}));
  EXPECT_EQ(out[2], Residency{});
  EXPECT_EQ(idx.resident(a, Tier::kDevice), 4);
  EXPECT_EQ(idx.resident(b, Tier::kDevice), 1);
}

TEST(ReplicaIndex, TheFastestTierCountsWhenABlockIsInSeveral) {
  ReplicaIndex idx(2);
  const ReplicaId a = idx.add_replica();
  const auto c = chain(1, 2);
  idx.stored(a, c[0], Tier::kDisk);
  idx.stored(a, c[0], Tier::kDevice);
  idx.stored(a, c[1], Tier::kDisk);
  idx.stored(a, c[1], Tier::kHost);
  EXPECT_EQ(lookup(idx, c)[a], (Residency{1, 1, 0, 0}));
}

TEST(ReplicaIndex, EventsInAnyOrder) {
  ReplicaIndex idx(2);
  const ReplicaId a = idx.add_replica();
  const auto c = chain(7, 3);
  // A child before its parent: resident, but counts only once the parent is.
  idx.stored(a, c[1], Tier::kDevice);
  idx.stored(a, c[2], Tier::kDevice);
  EXPECT_EQ(lookup(idx, c)[a].blocks(), 0);
  idx.stored(a, c[0], Tier::kDevice);
  EXPECT_EQ(lookup(idx, c)[a].blocks(), 3);
  // Duplicates change nothing; a removal of what is not there neither.
  idx.stored(a, c[0], Tier::kDevice);
  idx.removed(a, c[0], Tier::kHost);
  idx.removed(a, h(999), Tier::kDevice);
  EXPECT_EQ(lookup(idx, c)[a].blocks(), 3);
  EXPECT_EQ(idx.resident(a, Tier::kDevice), 3);
  // The parent evicted first (an S3-FIFO victim): the children are
  // unreachable until it is back.
  idx.removed(a, c[0], Tier::kDevice);
  EXPECT_EQ(lookup(idx, c)[a].blocks(), 0);
  EXPECT_EQ(idx.resident(a, Tier::kDevice), 2);
  // A move of a block the index never saw stored: it is where it moved to.
  idx.moved(a, c[0], Tier::kDevice, Tier::kHost);
  EXPECT_EQ(lookup(idx, c)[a], (Residency{2, 1, 0, 0}));
  idx.stored(a, c[0], Tier::kDevice);
  EXPECT_EQ(lookup(idx, c)[a], (Residency{3, 0, 0, 0}));
}

TEST(ReplicaIndex, MovesBetweenTiersAndOutOfTheLast) {
  ReplicaIndex idx(2);
  const ReplicaId a = idx.add_replica();
  const auto c = chain(50, 1);
  idx.stored(a, c[0], Tier::kDevice);
  idx.moved(a, c[0], Tier::kDevice, Tier::kHost);
  EXPECT_EQ(lookup(idx, c)[a], (Residency{0, 1, 0, 0}));
  idx.moved(a, c[0], Tier::kHost, Tier::kDisk);
  EXPECT_EQ(lookup(idx, c)[a], (Residency{0, 0, 1, 0}));
  EXPECT_EQ(idx.resident(a, Tier::kHost), 0);
  idx.removed(a, c[0], Tier::kDisk);
  EXPECT_EQ(lookup(idx, c)[a].blocks(), 0);
  EXPECT_EQ(idx.entries(), 0u);
}

TEST(ReplicaIndex, ClearedForgetsOneReplicaOnly) {
  ReplicaIndex idx(3);
  const ReplicaId a = idx.add_replica(), b = idx.add_replica(), c3 = idx.add_replica();
  const auto c = chain(10, 4);
  for (const auto& x : c) {
    idx.stored(a, x, Tier::kDevice);
    idx.stored(b, x, Tier::kHost);
  }
  idx.stored(c3, c[0], Tier::kDisk);
  EXPECT_EQ(idx.multi_entries(), 4u);
  idx.cleared(a);
  auto out = lookup(idx, c);
  EXPECT_EQ(out[a].blocks(), 0);
  EXPECT_EQ(out[b], (Residency{0, 4, 0, 0}));
  EXPECT_EQ(out[c3], (Residency{0, 0, 1, 0}));
  EXPECT_EQ(idx.resident(a, Tier::kDevice), 0);
  EXPECT_EQ(idx.multi_entries(), 1u);  // only c[0] is held twice now
  idx.cleared(b);
  idx.cleared(c3);
  EXPECT_EQ(idx.entries(), 0u);
  EXPECT_EQ(idx.multi_entries(), 0u);
}

TEST(ReplicaIndex, ARemovedReplicasIdComesBackEmpty) {
  ReplicaIndex idx(2);
  const ReplicaId a = idx.add_replica(), b = idx.add_replica();
  EXPECT_THROW(idx.add_replica(), RouteError);
  idx.stored(a, h(1), Tier::kDevice);
  idx.remove_replica(a);
  EXPECT_FALSE(idx.has_replica(a));
  EXPECT_THROW(idx.stored(a, h(1), Tier::kDevice), RouteError);
  EXPECT_EQ(idx.add_replica(), a);
  EXPECT_EQ(lookup(idx, chain(1, 1))[a].blocks(), 0);
  EXPECT_TRUE(idx.has_replica(b));
  EXPECT_THROW(ReplicaIndex(0), RouteError);
  EXPECT_THROW(ReplicaIndex(ReplicaIndex::kMaxReplicas + 1), RouteError);
}

TEST(ReplicaIndex, MasksBeyond64Replicas) {
  ReplicaIndex idx(200);
  for (int i = 0; i < 200; ++i) idx.add_replica();
  const auto c = chain(300, 5);
  const std::array<ReplicaId, 5> holders = {0, 63, 64, 129, 199};
  for (size_t k = 0; k < holders.size(); ++k)
    for (size_t i = 0; i <= k; ++i) idx.stored(holders[k], c[i], k % 2 ? Tier::kHost : Tier::kDevice);
  const auto out = lookup(idx, c);
  for (ReplicaId r = 0; r < 200; ++r) {
    int expected = 0;
    for (size_t k = 0; k < holders.size(); ++k)
      if (holders[k] == r) expected = static_cast<int>(k) + 1;
    EXPECT_EQ(out[static_cast<size_t>(r)].blocks(), expected) << r;
  }
  EXPECT_EQ(out[63], (Residency{0, 2, 0, 0}));
  EXPECT_EQ(out[199], (Residency{5, 0, 0, 0}));
}

TEST(ReplicaIndex, TheSharedTierServesEveryReplicaAfterItsOwnTiers) {
  ReplicaIndex idx(2);
  const ReplicaId a = idx.add_replica(), b = idx.add_replica();
  const auto c = chain(20, 3);
  idx.stored(a, c[0], Tier::kDevice);
  idx.shared_stored(c[0]);
  idx.shared_stored(c[1]);
  idx.stored(b, c[2], Tier::kDevice);
  auto out = lookup(idx, c);
  EXPECT_EQ(out[a], (Residency{1, 0, 0, 1}));
  EXPECT_EQ(out[b], (Residency{1, 0, 0, 2}));
  idx.shared_removed(c[1]);
  out = lookup(idx, c);
  EXPECT_EQ(out[a].blocks(), 1);
  EXPECT_EQ(out[b].blocks(), 1);
  idx.shared_cleared();
  EXPECT_EQ(lookup(idx, c)[b].blocks(), 0);
}

// One set per (replica, tier), the shared set, and the lookup by its
// definition; driven by random events over few blocks, so that every kind
// meets every state.
TEST(ReplicaIndex, MatchesAModelUnderRandomEvents) {
  constexpr int kReplicas = 130, kBlocks = 40;
  ReplicaIndex idx(kReplicas);
  for (int i = 0; i < kReplicas; ++i) idx.add_replica();
  std::vector<std::array<std::set<uint64_t>, 3>> held(kReplicas);
  std::set<uint64_t> shared;
  std::mt19937_64 rng(11);
  const auto tier = [&] { return static_cast<Tier>(rng() % 3); };
  // Few replicas, so that blocks are often held by several.
  const auto replica = [&] { return static_cast<ReplicaId>(rng() % 4 == 0 ? rng() % kReplicas : 60 + rng() % 8); };
  for (int step = 0; step < 20000; ++step) {
    const ReplicaId r = replica();
    const uint64_t b = rng() % kBlocks;
    auto& sets = held[static_cast<size_t>(r)];
    switch (rng() % 10) {
      case 0: case 1: case 2: case 3: {
        const Tier t = tier();
        idx.stored(r, h(b), t);
        sets[static_cast<size_t>(t)].insert(b);
        break;
      }
      case 4: case 5: {
        const Tier t = tier();
        idx.removed(r, h(b), t);
        sets[static_cast<size_t>(t)].erase(b);
        break;
      }
      case 6: case 7: {
        const Tier from = tier(), to = tier();
        idx.moved(r, h(b), from, to);
        sets[static_cast<size_t>(from)].erase(b);
        sets[static_cast<size_t>(to)].insert(b);
        break;
      }
      case 8:
        if (rng() % 50 == 0) {
          idx.cleared(r);
          for (auto& s : sets) s.clear();
        } else if (rng() % 2) {
          idx.shared_stored(h(b));
          shared.insert(b);
        } else {
          idx.shared_removed(h(b));
          shared.erase(b);
        }
        break;
      default: {
        // A chain of consecutive blocks from a random start.
        const uint64_t first = rng() % kBlocks;
        const auto c = chain(first, static_cast<int>(rng() % 12) + 1);
        const auto out = lookup_exact(idx, c);
        const auto estimate = lookup(idx, c);
        for (int q = 0; q < kReplicas; ++q) {
          Residency want;
          for (size_t i = 0; i < c.size(); ++i) {
            const uint64_t blk = first + i;
            const auto& s = held[static_cast<size_t>(q)];
            if (s[0].contains(blk)) ++want.device;
            else if (s[1].contains(blk)) ++want.host;
            else if (s[2].contains(blk)) ++want.disk;
            else if (shared.contains(blk)) ++want.shared;
            else break;
          }
          ASSERT_EQ(out[static_cast<size_t>(q)], want) << "step " << step << " replica " << q;
          // Holes everywhere here: the search may count a hole as held, never less.
          ASSERT_GE(estimate[static_cast<size_t>(q)].blocks(), want.blocks()) << "step " << step << " replica " << q;
        }
      }
    }
  }
  for (int q = 0; q < kReplicas; ++q)
    for (int t = 0; t < 3; ++t)
      EXPECT_EQ(idx.resident(q, static_cast<Tier>(t)), static_cast<int64_t>(held[static_cast<size_t>(q)][static_cast<size_t>(t)].size()));
}

// lookup() probes O(log n) blocks, not every one: exact when what each
// replica holds of a chain is a prefix with its tiers in order (device,
// host, disk, then the shared tier), as a cache that evicts tail-first
// holds. Chains are the paths of a random tree of blocks (each path
// branches off an earlier one), long enough for the bisection to matter;
// each replica's tier of a block is at least its parent's (4: not held),
// and the shared tier holds a prefix-closed set of its own.
TEST(ReplicaIndex, TheSearchIsExactOnPrefixShapedHoldings) {
  for (const int replicas : {64, 130}) {
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      std::mt19937_64 rng(seed * 31 + static_cast<uint64_t>(replicas));
      ReplicaIndex idx(replicas);
      for (int i = 0; i < replicas; ++i) idx.add_replica();
      // The tree: parent[b] (-1: a root), built as paths.
      std::vector<int64_t> parent;
      std::vector<std::vector<int64_t>> paths;
      for (int p = 0; p < 40; ++p) {
        std::vector<int64_t> path;
        if (p > 0 && rng() % 4 != 0) {
          const auto& from = paths[rng() % paths.size()];
          path.assign(from.begin(), from.begin() + static_cast<std::ptrdiff_t>(rng() % from.size() + 1));
        }
        const int fresh = 1 + static_cast<int>(rng() % 1500);
        for (int i = 0; i < fresh; ++i) {
          parent.push_back(path.empty() ? -1 : path.back());
          path.push_back(static_cast<int64_t>(parent.size()) - 1);
        }
        paths.push_back(std::move(path));
      }
      const size_t n = parent.size();
      // Levels: 0-2 a tier of the replica, 3 not held (then the shared tier
      // may serve it). A few replicas hold much, most little: a step up
      // every ~40-400 blocks.
      std::vector<std::vector<uint8_t>> level(static_cast<size_t>(replicas), std::vector<uint8_t>(n));
      std::vector<uint8_t> shared(n);
      for (int r = 0; r < replicas; ++r) {
        const uint64_t every = r % 8 == 0 ? 400 : 40;
        auto& lv = level[static_cast<size_t>(r)];
        for (size_t b = 0; b < n; ++b) {
          const uint8_t base = parent[b] < 0 ? static_cast<uint8_t>(rng() % 4) : lv[static_cast<size_t>(parent[b])];
          lv[b] = static_cast<uint8_t>(std::min<uint64_t>(3, base + (rng() % every == 0 ? 1 : 0)));
          if (lv[b] < 3) idx.stored(r, h(b), static_cast<Tier>(lv[b]));
        }
      }
      for (size_t b = 0; b < n; ++b) {
        shared[b] = (parent[b] < 0 ? rng() % 2 : shared[static_cast<size_t>(parent[b])]) && rng() % 300 != 0;
        if (shared[b] && seed % 2 == 0) idx.shared_stored(h(b));  // odd seeds: no shared tier
      }
      for (const auto& path : paths) {
        std::vector<cache::BlockHash> c;
        for (const int64_t b : path) c.push_back(h(static_cast<uint64_t>(b)));
        for (int extra = 0; extra < 16; ++extra) c.push_back(h(1000000 + static_cast<uint64_t>(extra)));  // new blocks
        const auto want = lookup_exact(idx, c), got = lookup(idx, c);
        for (int r = 0; r < replicas; ++r)
          ASSERT_EQ(got[static_cast<size_t>(r)], want[static_cast<size_t>(r)])
              << "replicas " << replicas << " seed " << seed << " replica " << r << " chain of " << c.size();
      }
    }
  }
}

// Across a hole the search is an estimate: block 10 of 16 evicted first,
// between probes 7 and 15 that the replica holds, so all 16 count (the
// exact walk: 10); the replica would find it missing and prefill it. A
// hole at a probed block (7) is seen: the bisection finds where the run
// ends.
TEST(ReplicaIndex, TheSearchCountsAHoleBetweenItsProbesAsHeld) {
  ReplicaIndex idx(2);
  const ReplicaId a = idx.add_replica(), b = idx.add_replica();
  const auto c = chain(500, 16);
  for (size_t i = 0; i < c.size(); ++i) {
    if (i != 10) idx.stored(a, c[i], Tier::kDevice);
    if (i != 7) idx.stored(b, c[i], Tier::kHost);
  }
  EXPECT_EQ(lookup_exact(idx, c)[a], (Residency{10, 0, 0, 0}));
  EXPECT_EQ(lookup(idx, c)[a], (Residency{16, 0, 0, 0}));
  EXPECT_EQ(lookup_exact(idx, c)[b], (Residency{0, 7, 0, 0}));
  EXPECT_EQ(lookup(idx, c)[b], (Residency{0, 7, 0, 0}));
}

}  // namespace
}  // namespace kvgate::route
