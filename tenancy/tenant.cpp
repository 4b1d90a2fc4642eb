// Tenant ids become the prefix of ledger and key RocksDB keys, separated by a
// \0; the id alphabet excludes \0 so that prefix scans cannot bleed into a
// tenant whose id extends another's.
#include "tenancy/tenant.h"

#include "tenancy/codec.h"
#include "tenancy/error.h"

namespace kvgate::tenancy {
namespace {
constexpr uint8_t kTenantFormat = 1;
}

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

std::string encode_tenant(const Tenant& t) {
  return Encoder(kTenantFormat)
      .bytes(t.id)
      .bytes(t.name)
      .bytes(t.org_id)
      .u8(static_cast<uint8_t>(t.status))
      .u8(t.share_org_scope ? 1 : 0)
      .bytes(t.own_scope)
      .bytes(t.plan_id)
      .u64(t.quotas.requests_per_minute)
      .u64(t.quotas.tokens_per_minute)
      .u64(t.quotas.max_concurrent_requests)
      .u64(t.quotas.monthly_spend_cap_micros)
      .u64(t.quotas.max_cached_kv_blocks)
      .u32(t.quotas.cached_token_weight_permille)
      .i64(t.created_ns)
      .take();
}

Tenant decode_tenant(std::string_view v) {
  Decoder d(v, kTenantFormat, "tenant");
  Tenant t;
  t.id = d.bytes();
  t.name = d.bytes();
  t.org_id = d.bytes();
  const uint8_t status = d.u8();
  if (status != 1 && status != 2) throw Error(ErrorCode::kCorrupt, "tenant: bad status");
  t.status = static_cast<TenantStatus>(status);
  t.share_org_scope = d.u8() != 0;
  t.own_scope = d.bytes();
  t.plan_id = d.bytes();
  t.quotas.requests_per_minute = d.u64();
  t.quotas.tokens_per_minute = d.u64();
  t.quotas.max_concurrent_requests = d.u64();
  t.quotas.monthly_spend_cap_micros = d.u64();
  t.quotas.max_cached_kv_blocks = d.u64();
  t.quotas.cached_token_weight_permille = d.u32();
  t.created_ns = d.i64();
  d.finish();
  return t;
}

}  // namespace kvgate::tenancy
