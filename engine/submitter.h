// Who a request is for, beyond its cache scope: what the scheduler's
// fairness, priorities and the cache's per-tenant counters group by.
#pragma once

#include <cstdint>

#include "policies/ids.h"

namespace kvgate {

struct Submitter {
  TenantId tenant = 0;   // non-secret label: fairness is across these
  int32_t priority = 0;  // higher first; lowest is preempted first
  // Cached blocks the tenant may hold (its tenancy quota); 0 = no limit.
  // Past it, its own blocks are evicted first, and a pin that does not fit
  // is refused.
  int64_t cache_quota_blocks = 0;
  // Blocks the tenant may keep pinned (its tenancy pin quota); 0 = the
  // scheduler's default (SchedulerOptions::tenant_pinned_percent of the pool).
  int64_t pin_quota_blocks = 0;
};

}  // namespace kvgate
