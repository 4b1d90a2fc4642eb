// Tenant-fair sharing: each tenant holding blocks in the tier is guaranteed
// an equal share of it, and the tenant furthest over its share gives up a
// block first (its own policy picks which), so one tenant's flood of
// never-reused prefixes cannot push a quiet tenant's working set out.
//
// Shares are of the blocks the tier holds (referenced or not): with T
// tenants present each is owed 1/T of them. A tenant under its share loses
// nothing while another is over; when every tenant with candidates is at or
// under its share, the one with the most blocks goes first. Each tenant's
// own order comes from an inner policy of its own (LRU, S3-FIFO or the
// cost-aware one), built by `make_inner`.
//
// O(tenants) per victim(), O(1) amortised otherwise; not thread-safe (the
// owning tier serialises calls).
#pragma once

#include <functional>
#include <memory>

#include "policies/eviction/eviction_policy.h"

namespace kvgate::policies {

std::unique_ptr<EvictionPolicy> make_tenant_fair_policy(std::function<std::unique_ptr<EvictionPolicy>()> make_inner,
                                                        PolicyParams shown_params);

}  // namespace kvgate::policies
