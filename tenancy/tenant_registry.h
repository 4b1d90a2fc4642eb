// Tenants, price plans and organisation cache scopes in the store.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tenancy/clock.h"
#include "base/mutex.h"
#include "tenancy/prices.h"
#include "tenancy/store.h"
#include "tenancy/tenant.h"

namespace kvgate::tenancy {

struct NewTenant {
  std::string id;
  std::string name;
  std::string org_id;
  bool share_org_scope = false;
  std::string plan_id;
  QuotaLimits quotas;
};

class TenantRegistry {
 public:
  TenantRegistry(Store& store, const WallClock& clock) : store_(store), clock_(clock) {}

  // Throws kAlreadyExists if the id is taken, kNotFound if the plan is unknown.
  Tenant create(const NewTenant& spec) ABSL_LOCKS_EXCLUDED(write_mu_);
  std::optional<Tenant> find(std::string_view id) const;
  Tenant get(std::string_view id) const;  // throws kNotFound
  // Replaces name, org, sharing, status, plan and quotas; id, own scope and
  // creation time are kept from the stored record.
  Tenant update(const Tenant& changed) ABSL_LOCKS_EXCLUDED(write_mu_);
  std::vector<Tenant> list() const;

  void put_plan(const PricePlan& plan);  // creates or replaces
  std::optional<PricePlan> find_plan(std::string_view id) const;
  PricePlan get_plan(std::string_view id) const;  // throws kNotFound
  std::vector<PricePlan> list_plans() const;

  // The 16-byte secret that seeds this tenant's block-hash chains: the org's
  // scope when the tenant shares it, else the tenant's own.
  std::string cache_scope(const Tenant& t) const;

 private:
  void validate(const Tenant& t) const;
  // Adds the org's scope to `batch` unless the store has it: a check that
  // stays true only while the caller holds write_mu_ until `batch` is written.
  void ensure_org_scope(const Tenant& t, rocksdb::WriteBatch* batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  Store& store_;
  const WallClock& clock_;
  // Serialises read-check-write sequences (create, update, org scope
  // creation); admin writes are rare, so one mutex is plenty. What it guards
  // lives in RocksDB, not in a field, so nothing here is ABSL_GUARDED_BY.
  Mutex write_mu_;
};

}  // namespace kvgate::tenancy
