// Invariants: where_ has exactly the ids queued in tenants_[*].queue, and
// size_ is their count. A tenant's counter only grows, except when it turns
// active again and is lifted to the lowest active counter.
#include "policies/admission/fair_queue.h"

#include <algorithm>
#include <limits>

namespace kvgate::policies {

int64_t FairQueue::min_active_counter() const {
  int64_t m = std::numeric_limits<int64_t>::max();
  for (const auto& [id, t] : tenants_)
    if (!t.queue.empty()) m = std::min(m, t.counter);
  return m == std::numeric_limits<int64_t>::max() ? 0 : m;
}

void FairQueue::push(const QueuedRequest& r) {
  Tenant& t = tenants_[r.tenant];
  if (t.queue.empty()) {
    // Returning from idle: no banked credit, but no debt beyond the others' either.
    const int64_t floor = min_active_counter();
    if (size_ > 0 && t.counter < floor) t.counter = floor;
  }
  t.queue.push_back(r);
  where_[r.id] = r.tenant;
  ++size_;
}

void FairQueue::push_front(const QueuedRequest& r) {
  Tenant& t = tenants_[r.tenant];
  t.queue.insert(t.queue.begin(), r);
  where_[r.id] = r.tenant;
  ++size_;
}

size_t FairQueue::pick_in_tenant(const Tenant& t) const {
  size_t best = 0;
  const bool lpm = opt_.prefer_cached_prefix && t.queue.size() <= opt_.lpm_max_queue;
  for (size_t i = 1; i < t.queue.size(); ++i) {
    const QueuedRequest& a = t.queue[i];
    const QueuedRequest& b = t.queue[best];
    if (a.priority != b.priority) {
      if (a.priority > b.priority) best = i;
      continue;
    }
    if (lpm && a.cached_prefix_tokens > b.cached_prefix_tokens) best = i;
  }
  return best;
}

const FairQueue::Tenant* FairQueue::pick_tenant(TenantId* id) const {
  const Tenant* best = nullptr;
  int32_t best_priority = 0;
  for (const auto& [tid, t] : tenants_) {
    if (t.queue.empty()) continue;
    const int32_t p = t.queue[pick_in_tenant(t)].priority;
    // Priority first; then the fewest weighted tokens served; then the
    // tenant served longest ago (a newcomer lifted to the others' counter
    // goes before the tenant it ties with).
    const bool better = !best || p > best_priority ||
                        (p == best_priority && (t.counter < best->counter ||
                                                (t.counter == best->counter && t.last_served < best->last_served)));
    if (better) {
      best = &t;
      best_priority = p;
      *id = tid;
    }
  }
  return best;
}

std::optional<QueuedRequest> FairQueue::peek() const {
  TenantId tid = 0;
  const Tenant* t = pick_tenant(&tid);
  if (!t) return std::nullopt;
  return t->queue[pick_in_tenant(*t)];
}

std::optional<QueuedRequest> FairQueue::pop() {
  TenantId tid = 0;
  if (!pick_tenant(&tid)) return std::nullopt;
  Tenant& t = tenants_.at(tid);
  const size_t i = pick_in_tenant(t);
  QueuedRequest r = t.queue[i];
  t.queue.erase(t.queue.begin() + static_cast<std::ptrdiff_t>(i));
  where_.erase(r.id);
  --size_;
  t.last_served = ++pops_;
  return r;
}

bool FairQueue::remove(RequestId id) {
  auto it = where_.find(id);
  if (it == where_.end()) return false;
  auto& q = tenants_.at(it->second).queue;
  q.erase(std::find_if(q.begin(), q.end(), [id](const QueuedRequest& r) { return r.id == id; }));
  where_.erase(it);
  --size_;
  return true;
}

void FairQueue::charge(TenantId tenant, int64_t tokens) {
  Tenant& t = tenants_[tenant];
  t.counter += tokens * 1000 / std::max<int64_t>(1, t.weight);  // milli-tokens: weights divide evenly enough
}

void FairQueue::set_weight(TenantId tenant, int64_t weight) { tenants_[tenant].weight = std::max<int64_t>(1, weight); }

int64_t FairQueue::counter(TenantId tenant) const {
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.counter;
}

}  // namespace kvgate::policies
