// A tenant record: who pays, under which plan, held to which limits, and
// which cache scope its prefix blocks live in.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tenancy/quota_limits.h"

namespace kvgate::tenancy {

enum class TenantStatus : uint8_t { kActive = 1, kSuspended = 2 };

struct Tenant {
  std::string id;       // [A-Za-z0-9_.-]{1,64}; part of RocksDB keys, so no \0
  std::string name;
  std::string org_id;   // empty: no organisation
  TenantStatus status = TenantStatus::kActive;
  // When true (and org_id is set) the tenant's cache scope is its org's, so
  // tenants of one org reuse each other's prefixes; otherwise it is private.
  bool share_org_scope = false;
  std::string own_scope;  // 16 random bytes, assigned at creation, never changed
  std::string plan_id;
  QuotaLimits quotas;
  int64_t created_ns = 0;

  bool operator==(const Tenant&) const = default;
};

constexpr size_t kScopeBytes = 16;

// Throws Error(kInvalidArgument) when `id` is not a valid tenant/org/plan id.
void check_id(std::string_view id, const char* what);

std::string encode_tenant(const Tenant& t);
Tenant decode_tenant(std::string_view v);

}  // namespace kvgate::tenancy
