// TierChain: one cache of the replay (replay.h): the device tier's
// BlockPool and the host and disk tiers below it, serving a trace's
// requests one at a time and counting their hits. replay() runs one for the
// whole trace; the routed replay (cluster_replay.h) one per replica.
//
// With an IndexFeed it also tells a route::ReplicaIndex what it holds, as a
// replica's block events would: the pool's stored events (device),
// victims moved down a tier or removed out of the last one. So the router
// of the routed replay sees what a front would see, through the real index.
#pragma once

#include <cstdint>
#include <memory>

#include "cache/hash128.h"
#include "gateway/cluster/route/replica_index.h"
#include "gateway/tools/sim/replay.h"
#include "gateway/tools/sim/replay_trace.h"

namespace kvgate::sim {

struct IndexFeed {
  route::ReplicaIndex* index = nullptr;  // null: no events
  route::ReplicaId replica = 0;
};

// The chain link the replay gives trace block `id` (with --repeat, the
// copy's offset added): what a request's chain is made of, for the router.
cache::BlockHash trace_link(int64_t id);

class TierChain {
 public:
  // `config` as replay() checks it; trace and config must outlive the chain.
  TierChain(const ReplayTrace& trace, const ReplayConfig& config, IndexFeed feed = {});
  ~TierChain();
  TierChain(const TierChain&) = delete;
  TierChain& operator=(const TierChain&) = delete;

  // Request r of copy `copy` (0 .. repeat - 1), counted in the result.
  void serve(int32_t copy, int64_t r);
  // The counts so far (seconds left at 0: the caller times the replay).
  const ReplayResult& result() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvgate::sim
