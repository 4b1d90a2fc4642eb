// What a request's tenant means to the engine: the secret cache scope its
// block-hash chains are seeded with, and the non-secret label that fairness,
// cache counters and block events group by (DESIGN invariants 2 and 7).
//
// The scope comes only from here, server-side, from the tenant's record:
// the org's scope when the tenant shares it, else its own. A client can
// narrow it with cache_salt (mixed into the chain seed), never widen it.
#pragma once

#include <string_view>

#include "cache/hash128.h"
#include "policies/ids.h"
#include "tenancy/tenant.h"
#include "tenancy/tenant_registry.h"

namespace kvgate::serving {

struct TenantIdentity {
  cache::ScopeId scope;  // secret: never logged, exported or sent anywhere
  TenantId label = 0;    // non-secret, the same in every process and restart
};

// The 16 scope bytes as two little-endian 64-bit halves (lo first).
cache::ScopeId scope_from_bytes(std::string_view sixteen_bytes);
// XXH3-64 of the tenant id: stable across processes, and a function of the
// public id only, so it reveals nothing the id does not.
TenantId tenant_label(std::string_view tenant_id);

TenantIdentity tenant_identity(const tenancy::TenantRegistry& tenants, const tenancy::Tenant& tenant);

// Request::placement_key of a prompt_cache_key: XXH3-64 of the tenant's
// scope and the key, so two tenants' equal keys are different keys; 0 (no
// hint) for an empty key, never for another.
uint64_t placement_key(const cache::ScopeId& scope, std::string_view prompt_cache_key);

}  // namespace kvgate::serving
