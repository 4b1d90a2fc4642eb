// LRU: the candidate released longest ago goes first.
//
// Depth is not consulted: the cache releases a request's blocks tail first,
// so a chain's tail is released before (is older than) its head and goes
// first, and a parent, which every longer prefix needs, outlives its
// children without the policy having to know.
#pragma once

#include <memory>

#include "policies/eviction/eviction_policy.h"

namespace kvgate::policies {

std::unique_ptr<EvictionPolicy> make_lru_policy();

}  // namespace kvgate::policies
