// Pure functions of a tenant record; any thread.
#include "gateway/serving/tenant_identity.h"

#include <xxhash.h>

#include <stdexcept>

namespace kvgate::serving {
namespace {

uint64_t le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

cache::ScopeId scope_from_bytes(std::string_view b) {
  if (b.size() != tenancy::kScopeBytes) throw std::invalid_argument("a cache scope is 16 bytes");
  const auto* p = reinterpret_cast<const unsigned char*>(b.data());
  return {le64(p), le64(p + 8)};
}

TenantId tenant_label(std::string_view tenant_id) { return XXH3_64bits(tenant_id.data(), tenant_id.size()); }

uint64_t placement_key(const cache::ScopeId& scope, std::string_view prompt_cache_key) {
  if (prompt_cache_key.empty()) return 0;
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, &scope.lo, sizeof scope.lo);
  XXH3_64bits_update(st, &scope.hi, sizeof scope.hi);
  XXH3_64bits_update(st, prompt_cache_key.data(), prompt_cache_key.size());
  const uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h == 0 ? 1 : h;
}

TenantIdentity tenant_identity(const tenancy::TenantRegistry& tenants, const tenancy::Tenant& tenant) {
  return {scope_from_bytes(tenants.cache_scope(tenant)), tenant_label(tenant.id)};
}

}  // namespace kvgate::serving
