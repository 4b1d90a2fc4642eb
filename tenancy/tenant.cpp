// Tenant ids become the prefix of ledger and key RocksDB keys, separated by a
// \0; the id alphabet excludes \0 so that prefix scans cannot bleed into a
// tenant whose id extends another's.
#include "tenancy/tenant.h"

#include "tenancy/codec.h"
#include "tenancy/error.h"

namespace kvgate::tenancy {
namespace {

// A tenant's one field list, in on-disk order (codec.h). Format 2 added the
// pin quota; a format-1 tenant reads back with the server's default (0).
template <uint8_t Format>
struct TenantFields {
  using Record = Tenant;
  static constexpr uint8_t kFormat = Format;
  static constexpr const char* kWhat = "tenant";
  template <class R, class Field>
  static void visit(R& t, Field& f) {
    f(t.id);
    f(t.name);
    f(t.org_id);
    f(t.status);
    f(t.share_org_scope);
    f(t.own_scope);
    f(t.plan_id);
    f(t.quotas.requests_per_minute);
    f(t.quotas.tokens_per_minute);
    f(t.quotas.max_concurrent_requests);
    f(t.quotas.monthly_spend_cap_micros);
    f(t.quotas.max_cached_kv_blocks);
    f(t.quotas.cached_token_weight_permille);
    f(t.created_ns);
    if constexpr (Format >= 2) f(t.quotas.max_pinned_kv_blocks);
  }
};
using CurrentTenantFields = TenantFields<2>;

}  // namespace

void check_id(std::string_view id, const char* what) {
  bool ok = !id.empty() && id.size() <= 64;
  for (char c : id) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || c == '.');
  }
  if (!ok) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + " '" + std::string(id) +
                    "' must be 1-64 characters of [A-Za-z0-9_.-]");
  }
}

std::string encode_tenant(const Tenant& t) { return encode_record<CurrentTenantFields>(t); }

Tenant decode_tenant(std::string_view v) {
  Tenant t = record_format(v) == 1 ? decode_record<TenantFields<1>>(v) : decode_record<CurrentTenantFields>(v);
  if (t.status != TenantStatus::kActive && t.status != TenantStatus::kSuspended) {
    throw Error(ErrorCode::kCorrupt, "tenant: bad status");
  }
  return t;
}

}  // namespace kvgate::tenancy
