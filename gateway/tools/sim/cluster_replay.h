// The routed replay (`kvgate sim --replicas N --router NAME`): the trace
// over N replicas, each its own TierChain (tier_chain.h) with the per-
// replica capacities, a route policy of gateway/route/ choosing the replica
// of every request, as the front of `kvgate route` would.
//
// The router sees what a front sees: a route::ReplicaIndex fed by each
// replica's own block events (stored on the device, moved down a tier,
// removed out of the last), and each replica's load. Load, a simple model:
// from its arrival (the trace's timestamp) a request is busy on its replica
// for its fresh prompt tokens (not hit) at prefill_tokens_per_s, then its
// output_length tokens at decode_tokens_per_s, and while it is, the
// replica's load counts its prompt plus output tokens (the context each
// step reads, as Dynamo counts active KV blocks). With --repeat, copy c
// arrives c x (the last timestamp + 1 ms) later.
//
// Each replica is served in arrival order, one request at a time: caches see
// the same sequence they would in a real cluster, minus concurrency (a
// request's blocks are released before the next arrives).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gateway/tools/sim/replay.h"
#include "gateway/tools/sim/replay_trace.h"

namespace kvgate::sim {

struct ClusterConfig {
  ReplayConfig replica;  // every replica's tiers and policy (not the Belady bound: it needs each replica's future)
  int32_t replicas = 1;
  std::string router;    // a route policy spec (gateway/route/route_policy.h)
  double prefill_tokens_per_s = 10000;
  double decode_tokens_per_s = 50;
};

struct ClusterResult {
  std::string router;              // the spec with every parameter
  ReplayResult total;              // the replicas' counts summed
  std::vector<int64_t> requests;   // per replica
  double route_seconds = 0;        // in the router's choose() (index lookups included)

  // Max over mean requests per replica: 1 is even.
  double balance() const;
};

// Throws kvgate::Error for a bad configuration (fewer than 1 replica, more
// than the index holds, the Belady bound, what replay() refuses) and
// route::RouteError for a bad router.
ClusterResult replay_cluster(const ReplayTrace& trace, const ClusterConfig& config);

}  // namespace kvgate::sim
