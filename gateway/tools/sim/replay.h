// Replaying a request trace through the cache the server runs: the device
// tier is a cache::BlockPool with a policy from the registry (or the offline
// Belady bound), exactly as the engine drives it (lookup, allocate, commit,
// release tail first). Host and disk tiers, when asked for, are a stand-in
// until cache/tiers/ exists: a store per tier ordered by its own instance of
// the same policy (or of --lower-policy). See docs/policies.md.
//
// How a trace maps onto the pool: one token per block, whose id is the
// block's hash id (plus, for --repeat, the copy's offset), and whose chain
// link is that id + 1 (the link's low half is the content key the pool gives
// the policy, and 0 means none); the pool verifies parent, depth, scope and
// token as for real prompts. A request:
//   1. looks its chain up on the device (the longest cached prefix: hits,
//      referenced);
//   2. continues that prefix through the host, then the disk tier, block by
//      block while a tier holds the next one (a hit counts in the tier it
//      came from and is copied up to the device);
//   3. allocates and commits a device block for every block after that
//      (misses; a block already cached beyond the first miss stays as it
//      is, as in the pool);
//   4. releases its blocks tail first;
//   5. then the device evicts until at most `capacity` blocks are cached,
//      each victim falling to the next tier (whose own overflow falls
//      further, and out of the last one).
// So only the request being served holds more than the capacity, and only
// while it is served: the reference model of ../shared/traces/README.md.
// The pool has capacity + the longest chain blocks; the sim holds the
// blocks the cache does not use as placeholders (private blocks), and fills
// the placeholders back to make the device evict (step 5).
//
// Hits are weighted by the tokens a block holds (512, the last block its
// remainder), by blocks, and by prefill: tokens x (1 + depth_weight x
// depth), what the cost-aware policy optimises.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gateway/tools/sim/replay_trace.h"
#include "policies/eviction/eviction_policy.h"
#include "policies/eviction/policy_registry.h"

namespace kvgate::sim {

struct TierSpec {
  policies::Tier tier = policies::Tier::kDevice;
  int64_t blocks = 0;
  bool operator==(const TierSpec&) const = default;
};

std::string_view tier_name(policies::Tier tier);

struct ReplayConfig {
  std::vector<TierSpec> tiers;  // device first, then host, then disk (each at most once, in that order)
  policies::PolicySpec policy;  // "belady": the offline bound (on every tier)
  // The host and disk tiers' policy; unset: the same as the device's.
  std::optional<policies::PolicySpec> lower_policy;
  int32_t repeat = 1;           // back-to-back copies of the trace with disjoint hash ids
  double depth_weight = 0.02;   // for the prefill-weighted hit rate
};

struct TierHits {
  int64_t tokens = 0, blocks = 0;
};

struct ReplayResult {
  std::string policy;             // the spec as written back ("s3fifo / lru" with another lower-tier policy)
  policies::PolicyParams params;  // effective (device tier's policy)
  int64_t requests = 0, tokens = 0, blocks = 0;
  int64_t hit_tokens = 0, hit_blocks = 0;
  double prefill = 0, hit_prefill = 0;  // tokens x (1 + depth_weight x depth)
  std::vector<TierHits> tiers;          // per tier of the config, in its order
  int64_t evictions = 0;                // device victims
  double seconds = 0;                   // the replay alone (not reading the trace)

  double token_rate() const { return tokens ? 100.0 * static_cast<double>(hit_tokens) / static_cast<double>(tokens) : 0; }
  double block_rate() const { return blocks ? 100.0 * static_cast<double>(hit_blocks) / static_cast<double>(blocks) : 0; }
  double prefill_rate() const { return prefill > 0 ? 100.0 * hit_prefill / prefill : 0; }
  double tier_token_rate(size_t t) const {
    return tokens ? 100.0 * static_cast<double>(tiers[t].tokens) / static_cast<double>(tokens) : 0;
  }
};

// Throws kvgate::Error for a bad configuration (tiers out of order, a
// capacity below 1, too many copies for 31-bit ids) and PolicyError for a
// bad policy.
ReplayResult replay(const ReplayTrace& trace, const ReplayConfig& config);
// The configuration checks of replay() alone (the policy is checked when
// it is built).
void check_config(const ReplayTrace& trace, const ReplayConfig& config);

}  // namespace kvgate::sim
