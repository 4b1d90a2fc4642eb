// FairQueue: the order in which waiting requests are admitted, fair across
// tenants.
//
// Fairness is by tokens served, as the Virtual Token Counter of "Fairness in
// Serving Large Language Models" (Sheng et al., OSDI 2024): each tenant has a
// counter of the (weighted) tokens the engine has spent on it; the next
// request comes from the tenant with waiting work whose counter is lowest.
// A tenant that becomes active again starts at the lowest counter among the
// active ones, so being idle banks no credit. A flood of requests from one
// tenant therefore cannot push another tenant's request back more than one
// admission per other active tenant.
//
// Within a tenant the order is FCFS by default. With prefer_cached_prefix,
// the request with the longest cached prefix goes first (SGLang's
// longest-prefix-match, which keeps hot prefixes resident), falling back to
// FCFS when the tenant's queue is longer than lpm_max_queue, where sorting
// by prefix costs more than it saves and starves the unlucky.
//
// Pure bookkeeping: no locks, no I/O; the engine loop owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "policies/ids.h"

namespace kvgate::policies {

struct QueuedRequest {
  RequestId id = 0;
  TenantId tenant = 0;
  int32_t priority = 0;             // higher first, before fairness (0 = normal)
  int64_t cached_prefix_tokens = 0; // the prefix cache's estimate at enqueue time
};

struct FairQueueOptions {
  bool prefer_cached_prefix = false;
  size_t lpm_max_queue = 128;
};

class FairQueue {
 public:
  explicit FairQueue(FairQueueOptions opt = {}) : opt_(opt) {}

  void push(const QueuedRequest& r);
  // Takes the next request to admit, or nothing when empty.
  std::optional<QueuedRequest> pop();
  // Looks at what pop() would return, without taking it.
  std::optional<QueuedRequest> peek() const;
  // Puts a request back at the head of its tenant's queue (admission failed
  // for lack of blocks, or the request was preempted); no tokens are charged.
  void push_front(const QueuedRequest& r);
  bool remove(RequestId id);  // cancelled while waiting
  // The engine spent `tokens` (prompt or output) on the tenant.
  void charge(TenantId tenant, int64_t tokens);
  // Relative share: a tenant of weight 2 gets twice the tokens of weight 1.
  void set_weight(TenantId tenant, int64_t weight);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t counter(TenantId tenant) const;

 private:
  struct Tenant {
    std::vector<QueuedRequest> queue;  // FCFS order (front = oldest)
    int64_t counter = 0;               // weighted tokens served
    int64_t weight = 1;
    uint64_t last_served = 0;          // pop() sequence number; ties go to the longest unserved
  };
  // Index into t.queue of the request this tenant would send next.
  size_t pick_in_tenant(const Tenant& t) const;
  // The tenant with waiting requests to serve next, or nullptr.
  const Tenant* pick_tenant(TenantId* id) const;
  int64_t min_active_counter() const;

  FairQueueOptions opt_;
  std::map<TenantId, Tenant> tenants_;  // ordered: ties go to the lower id, deterministically
  std::unordered_map<RequestId, TenantId> where_;
  size_t size_ = 0;
  uint64_t pops_ = 0;
};

}  // namespace kvgate::policies
