// Invariants:
//  - a tenant's own_scope is chosen once, at creation, and never changes, so
//    its cached blocks (in every tier, across restarts) stay reachable;
//  - an org scope exists for every org that has a sharing tenant; it is
//    written in the same batch as the tenant that first needs it.
// Thread-safety: reads go straight to RocksDB; create and update (the
// read-check-write sequences) hold write_mu_; put_plan is one blind Put.
#include "tenancy/tenant_registry.h"

#include <memory>

#include "tenancy/error.h"
#include "tenancy/random_bytes.h"

namespace kvgate::tenancy {

void TenantRegistry::validate(const Tenant& t) const {
  check_id(t.id, "tenant id");
  if (!t.org_id.empty()) check_id(t.org_id, "org id");
  if (t.share_org_scope && t.org_id.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "tenant '" + t.id + "' shares its org's cache scope but has no org");
  }
  if (t.status != TenantStatus::kActive && t.status != TenantStatus::kSuspended) {
    throw Error(ErrorCode::kInvalidArgument, "tenant '" + t.id + "' has an unknown status");
  }
  if (t.quotas.cached_token_weight_permille > 1000) {
    throw Error(ErrorCode::kInvalidArgument, "cached_token_weight_permille must be 0..1000");
  }
  if (!find_plan(t.plan_id)) {
    throw Error(ErrorCode::kNotFound, "tenant '" + t.id + "' names unknown plan '" + t.plan_id + "'");
  }
}

void TenantRegistry::ensure_org_scope(const Tenant& t, rocksdb::WriteBatch* batch) {
  if (!t.share_org_scope || store_.get(Family::kOrgScopes, t.org_id)) return;
  check_status(batch->Put(store_.cf(Family::kOrgScopes), t.org_id, random_bytes(kScopeBytes)),
               "org scope");
}

Tenant TenantRegistry::create(const NewTenant& spec) {
  Tenant t;
  t.id = spec.id;
  t.name = spec.name;
  t.org_id = spec.org_id;
  t.share_org_scope = spec.share_org_scope;
  t.plan_id = spec.plan_id;
  t.quotas = spec.quotas;
  t.own_scope = random_bytes(kScopeBytes);
  t.created_ns = clock_.now_ns();
  validate(t);

  MutexLock lock(write_mu_);
  if (store_.get(Family::kTenants, t.id)) {
    throw Error(ErrorCode::kAlreadyExists, "tenant '" + t.id + "' already exists");
  }
  rocksdb::WriteBatch batch;
  ensure_org_scope(t, &batch);
  check_status(batch.Put(store_.cf(Family::kTenants), t.id, encode_tenant(t)), "tenant");
  store_.write(&batch, /*sync=*/true);
  return t;
}

std::optional<Tenant> TenantRegistry::find(std::string_view id) const {
  std::optional<std::string> v = store_.get(Family::kTenants, id);
  if (!v) return std::nullopt;
  return decode_tenant(*v);
}

Tenant TenantRegistry::get(std::string_view id) const {
  std::optional<Tenant> t = find(id);
  if (!t) throw Error(ErrorCode::kNotFound, "no tenant '" + std::string(id) + "'");
  return *t;
}

Tenant TenantRegistry::update(const Tenant& changed) {
  MutexLock lock(write_mu_);
  const Tenant stored = get(changed.id);
  Tenant t = changed;
  t.own_scope = stored.own_scope;
  t.created_ns = stored.created_ns;
  validate(t);
  rocksdb::WriteBatch batch;
  ensure_org_scope(t, &batch);
  check_status(batch.Put(store_.cf(Family::kTenants), t.id, encode_tenant(t)), "tenant");
  store_.write(&batch, /*sync=*/true);
  return t;
}

std::vector<Tenant> TenantRegistry::list() const {
  std::vector<Tenant> out;
  std::unique_ptr<rocksdb::Iterator> it(
      store_.db()->NewIterator(rocksdb::ReadOptions(), store_.cf(Family::kTenants)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out.push_back(decode_tenant(it->value().ToStringView()));
  }
  check_status(it->status(), "listing tenants");
  return out;
}

void TenantRegistry::put_plan(const PricePlan& plan) {
  check_id(plan.id, "plan id");
  rocksdb::WriteBatch batch;
  check_status(batch.Put(store_.cf(Family::kPlans), plan.id, encode_plan(plan)), "plan");
  store_.write(&batch, /*sync=*/true);
}

std::optional<PricePlan> TenantRegistry::find_plan(std::string_view id) const {
  std::optional<std::string> v = store_.get(Family::kPlans, id);
  if (!v) return std::nullopt;
  return decode_plan(*v);
}

PricePlan TenantRegistry::get_plan(std::string_view id) const {
  std::optional<PricePlan> p = find_plan(id);
  if (!p) throw Error(ErrorCode::kNotFound, "no price plan '" + std::string(id) + "'");
  return *p;
}

std::vector<PricePlan> TenantRegistry::list_plans() const {
  std::vector<PricePlan> out;
  std::unique_ptr<rocksdb::Iterator> it(
      store_.db()->NewIterator(rocksdb::ReadOptions(), store_.cf(Family::kPlans)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out.push_back(decode_plan(it->value().ToStringView()));
  }
  check_status(it->status(), "listing plans");
  return out;
}

std::string TenantRegistry::cache_scope(const Tenant& t) const {
  if (!t.share_org_scope) return t.own_scope;
  std::optional<std::string> scope = store_.get(Family::kOrgScopes, t.org_id);
  if (!scope || scope->size() != kScopeBytes) {
    throw Error(ErrorCode::kCorrupt, "org '" + t.org_id + "' has no cache scope");
  }
  return *scope;
}

}  // namespace kvgate::tenancy
