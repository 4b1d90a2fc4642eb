// Prefix cache counters: a plain snapshot, taken on the pool's thread and
// handed to whoever exports it (the metrics issue). Keyed by the tenant's
// non-secret label, never by the secret cache scope (invariant 7).
//
// "Tokens" counters count prompt tokens; hit tokens follow the engine's
// cached-token rule (see docs/prefix-cache-notes.md), so for every request
// the engine reports hit == cached_tokens.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "policies/ids.h"

namespace kvgate::cache {

struct TenantCacheStats {
  int64_t query_tokens = 0;        // prompt tokens looked up
  int64_t hit_tokens = 0;          // of which served from the cache
  int64_t blocks_in_use = 0;       // referenced blocks of this tenant (private or cached)
  int64_t blocks_cached_free = 0;  // unreferenced cached blocks of this tenant (evictable)
  int64_t blocks_cached = 0;       // cached blocks of this tenant, referenced or not (its cache quota)
  int64_t blocks_stored = 0;       // blocks committed to the cache, ever
  int64_t evictions = 0;           // blocks of this tenant evicted, ever
  int64_t blocks_pinned = 0;       // blocks this tenant pinned (counted for the pinning tenant)
};

struct CacheStats {
  int32_t blocks_total = 0;
  int32_t blocks_in_use = 0;       // referenced (private or cached)
  int32_t blocks_cached_free = 0;  // cached, unreferenced: evictable
  int32_t blocks_free = 0;         // holding nothing
  int32_t blocks_pinned = 0;       // in use by a pin (a subset of blocks_in_use)
  TenantCacheStats all;             // sums over tenants
  std::vector<std::pair<TenantId, TenantCacheStats>> tenants;  // sorted by tenant label
};

}  // namespace kvgate::cache
