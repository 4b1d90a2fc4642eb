#include "gateway/cluster/route/sticky_routes.h"

namespace kvgate::route {

std::optional<ReplicaId> StickyRoutes::find(uint64_t key, std::span<const ReplicaState> replicas,
                                            int64_t request_tokens) {
  const auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  const ReplicaId r = it->second->second;
  if (static_cast<size_t>(r) >= replicas.size() || !replicas[static_cast<size_t>(r)].live) return std::nullopt;
  int64_t total = 0, live = 0;
  for (const ReplicaState& s : replicas)
    if (s.live) total += s.load, ++live;
  if (replicas[static_cast<size_t>(r)].load * live > 2 * total + request_tokens * live) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return r;
}

void StickyRoutes::bind(uint64_t key, ReplicaId replica) {
  if (capacity_ == 0) return;
  if (const auto it = index_.find(key); it != index_.end()) {
    it->second->second = replica;
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (index_.size() >= capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.emplace_front(key, replica);
  index_[key] = lru_.begin();
}

}  // namespace kvgate::route
