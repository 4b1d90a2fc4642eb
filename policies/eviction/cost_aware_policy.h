// Cost-aware eviction: GreedyDual with frequency (GDSF, Cherkasova 1998)
// over what a block's eviction costs the next request that needs it.
//
// A block's loss, in units of the prefill of one block at depth 0:
//   - if it would fall to a lower tier (its tier is above `last_tier`), the
//     cost of restoring it from there: restore_host or restore_disk;
//   - if it would be gone (its tier is the last), recomputing it:
//     1 + depth_weight x depth, since a block's prefill attends to every
//     token before it, so deeper blocks cost more (0.02 ~ a 7B-class model,
//     whose attention FLOPs match its linear layers' near 25k tokens).
// Priority = L + hits x loss, fixed when the block is released; the victim
// has the lowest, a deeper block first on a tie; L (the inflation clock)
// becomes each victim's priority, so blocks not used for a while age out.
// hits counts uses while cached, up to max_hits.
//
// What it costs to *keep* a block is the same for every block of a tier
// (one size, one medium), so it cannot reorder the tier's blocks: within a
// tier it only scales every priority alike. Between tiers it is what the
// restore costs stand for.
//
// A chain's blocks are only worth their loss together with their parents
// (a hit needs the whole prefix), so a parent must not go before its child:
// the pool releases a request's blocks tail first, and a block released
// right after one a level deeper (its child) takes the larger of the two
// priorities. Without that rule depth weighting evicts heads and keeps
// useless tails (in a prototype of the replay at 5% of the Mooncake trace's
// blocks with depth_weight 0.1: 7.3% of tokens hit instead of 17.0%). Every
// call is O(log n).
#pragma once

#include <memory>

#include "policies/eviction/eviction_policy.h"

namespace kvgate::policies {

struct CostAwareParams {
  double depth_weight = 0.02;  // extra prefill per level of depth, in depth-0 blocks
  double restore_host = 0.05;  // restoring a block from host memory, in depth-0 block prefills
  double restore_disk = 0.3;   // from the disk tier
  int last_tier = 0;           // the lowest tier there is: 0 device only, 1 host, 2 disk
  int max_hits = 16;           // uses counted
};

// Throws PolicyError for parameters out of range.
std::unique_ptr<EvictionPolicy> make_cost_aware_policy(const CostAwareParams& params = {});

}  // namespace kvgate::policies
