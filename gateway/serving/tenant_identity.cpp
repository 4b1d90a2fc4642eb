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

TenantIdentity tenant_identity(const tenancy::TenantRegistry& tenants, const tenancy::Tenant& tenant) {
  return {scope_from_bytes(tenants.cache_scope(tenant)), tenant_label(tenant.id)};
}

}  // namespace kvgate::serving
