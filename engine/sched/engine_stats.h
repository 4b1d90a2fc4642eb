// EngineStats: what observers read of the engine loop's state (the pool's
// counters, the requests running, the tiers' restores), as one value the
// loop publishes rather than one a reader fetches from it: a /metrics or
// dashboard scrape never waits for a step (a long prefill can take
// seconds), however many scrapes arrive.
#pragma once

#include <cstdint>
#include <string>

#include "cache/cache_stats.h"
#include "cache/tiers/tier_mover.h"
#include "engine/sched/tier_exchange.h"

namespace kvgate {

class Scheduler;

struct EngineStats {
  cache::CacheStats cache;     // the device pool's
  int64_t running = 0;         // requests in the running set
  std::string policy;          // the device pool's eviction policy
  RestoreCounters restores;    // blocks brought back up from the tiers below
  cache::MoverStats mover;     // copies down to the tiers (zero without them)
};

// On the loop thread (or whoever owns `s`).
EngineStats read_engine_stats(const Scheduler& s);

}  // namespace kvgate
