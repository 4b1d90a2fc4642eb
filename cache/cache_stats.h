// Prefix cache counters: a plain snapshot, taken on the pool's thread and
// handed to whoever exports it (the metrics issue).
//
// "Tokens" counters count prompt tokens; hit tokens follow the engine's
// cached-token rule (see docs/prefix-cache-notes.md), so for every request
// the engine reports hit == cached_tokens.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "cache/hash128.h"

namespace kvgate::cache {

struct ScopeCacheStats {
  int64_t query_tokens = 0;        // prompt tokens looked up
  int64_t hit_tokens = 0;          // of which served from the cache
  int64_t blocks_in_use = 0;       // referenced blocks of this scope (private or cached)
  int64_t blocks_cached_free = 0;  // unreferenced cached blocks of this scope (evictable)
  int64_t blocks_stored = 0;       // blocks committed to the cache, ever
  int64_t evictions = 0;           // blocks of this scope evicted, ever
};

struct CacheStats {
  int32_t blocks_total = 0;
  int32_t blocks_in_use = 0;       // referenced (private or cached)
  int32_t blocks_cached_free = 0;  // cached, unreferenced: evictable
  int32_t blocks_free = 0;         // holding nothing
  ScopeCacheStats all;             // sums over scopes
  std::vector<std::pair<ScopeId, ScopeCacheStats>> scopes;  // sorted by scope
};

}  // namespace kvgate::cache
