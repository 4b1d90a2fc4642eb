// Who a request is for, beyond its cache scope: what the scheduler's
// fairness, priorities and the cache's per-tenant counters group by.
#pragma once

#include <cstdint>

#include "policies/ids.h"

namespace kvgate {

struct Submitter {
  TenantId tenant = 0;   // non-secret label: fairness is across these
  int32_t priority = 0;  // higher first; lowest is preempted first
};

}  // namespace kvgate
