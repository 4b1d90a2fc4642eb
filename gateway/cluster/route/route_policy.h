// Route policies: which replica a request goes to, by name.
//
//   cache_aware  the lowest cost, NVIDIA Dynamo's KV router's: the prefill
//                the replica would still have to do given what it holds,
//                plus its load:
//                  cost = fresh + host x host_tokens + disk x disk_tokens
//                         + shared x shared_tokens + load x load_tokens
//                fresh: prompt tokens not resident there in any tier;
//                *_tokens: tokens it would restore from that tier (a
//                restore is cheaper than a prefill, but not free); the
//                load in tokens (the context of the sequences it is
//                prefilling or decoding: what each step reads). Ties go to the
//                less loaded replica, then to the one chosen least
//                recently, so cold requests spread round the cluster.
//   round_robin  live replicas in turn.
//   random       a live replica uniformly at random (seeded: reproducible).
//
// A spec is NAME or NAME:key=value,... ("cache_aware:load=0.5",
// "random:seed=7"); an unknown name or key is a RouteError listing the
// valid ones. The replicas' state (in rotation, scorable, load) is the
// caller's: a replica out of rotation (dead) is never chosen; one that is
// not scorable (its cache identity differs from the front's, so its block
// hashes do not mean ours) gets no prefix credit but still serves.
//
// A policy is stateful (cursor, random engine, tie-break stamps): one per
// thread, as the index.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/hash128.h"
#include "gateway/cluster/route/replica_index.h"

namespace kvgate::route {

// One replica as the front sees it, indexed by ReplicaId.
struct ReplicaState {
  bool live = false;      // in rotation
  bool scorable = true;   // its cache identity matches: its residency counts
  int64_t load = 0;       // context tokens of the sequences it is prefilling or decoding
};

struct RouteRequest {
  std::span<const cache::BlockHash> chain;  // the prompt's block hashes, scope-chained
  int64_t prompt_tokens = 0;
  int32_t block_tokens = 16;                // tokens per block of the chain
  uint64_t placement_key = 0;               // Request::placement_key (sticky_routes.h); 0: none
};

// cache_aware's weights: the cost of a restored token (a prefilled one is 1)
// and of a token of load. load = 0.1 from `kvgate sim --replicas` on the
// Mooncake trace (docs/policies.md): 1 sends continuing conversations away
// from their prefix for load that would have cleared, 0 sends everything
// that shares a first block to one replica.
struct CostWeights {
  double host = 0.1, disk = 0.3, shared = 0.4, load = 0.1;
};

// cache_aware's cost of sending `request` to a replica holding `held` of it.
double route_cost(const Residency& held, const RouteRequest& request, const ReplicaState& replica,
                  const CostWeights& w);

class RoutePolicy {
 public:
  virtual ~RoutePolicy() = default;
  // The spec with every parameter, as parse would read it back.
  virtual std::string name() const = 0;
  // The replica for `request` among replicas[0 .. size) (ids as in the
  // index), or nothing when none is live.
  virtual std::optional<ReplicaId> choose(const RouteRequest& request, const ReplicaIndex& index,
                                          std::span<const ReplicaState> replicas) = 0;
};

// The policies' names, in the order `all` means.
const std::vector<std::string>& route_policy_names();
// A policy from its spec; RouteError for an unknown name, key or value.
std::unique_ptr<RoutePolicy> make_route_policy(std::string_view spec);
// Comma-separated specs ("cache_aware:load=0.5,host=0.2,round_robin": a
// part with '=' and no ':' is a further parameter of the spec before it, as
// for eviction policies), or "all" for every policy with its defaults; each
// spec checked as make_route_policy checks it. RouteError as above.
std::vector<std::string> parse_route_list(std::string_view text);

}  // namespace kvgate::route
