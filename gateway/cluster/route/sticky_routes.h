// prompt_cache_key's placement: a tenant's requests that carry the same key
// go to the replica the key's first request went to, while that replica is
// live and has room, as OpenAI routes requests by prompt_cache_key so that
// prompts sharing a prefix find it cached. The key arrives hashed with the
// tenant's scope (Request::placement_key), so one tenant's key never
// places another's requests.
//
// Room: the bound replica's load is at most twice the mean load of the live
// replicas, plus the request's own tokens. Past that the request goes where
// the route policy sends it, and the key is bound there instead: a key hot
// enough to fill a replica spreads, as OpenAI's overflow does.
//
// Bounded: at most `capacity` keys, the least recently used dropped first.
// Not thread-safe: one per route policy, under its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>

#include "gateway/cluster/route/replica_index.h"
#include "gateway/cluster/route/route_policy.h"

namespace kvgate::route {

class StickyRoutes {
 public:
  explicit StickyRoutes(size_t capacity = 65536) : capacity_(capacity) {}

  // The replica `key` is bound to, if it can take a request of
  // `request_tokens` now (live, with room).
  std::optional<ReplicaId> find(uint64_t key, std::span<const ReplicaState> replicas, int64_t request_tokens);
  // Binds `key` to `replica` (its most recent use).
  void bind(uint64_t key, ReplicaId replica);

  size_t size() const { return index_.size(); }

 private:
  const size_t capacity_;
  std::list<std::pair<uint64_t, ReplicaId>> lru_;  // most recent first
  std::unordered_map<uint64_t, std::list<std::pair<uint64_t, ReplicaId>>::iterator> index_;
};

}  // namespace kvgate::route
