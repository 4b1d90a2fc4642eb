// The tenancy seam the gateway uses (DESIGN.md): authenticate a key, admit a
// request against the tenant's quotas, and when it ends, settle the quotas
// and record it in the ledger. Owns the store and every part built on it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tenancy/api_keys.h"
#include "tenancy/clock.h"
#include "tenancy/held_records.h"
#include "tenancy/ledger.h"
#include "tenancy/quota.h"
#include "tenancy/response_store.h"
#include "tenancy/store.h"
#include "tenancy/tenant_registry.h"

namespace kvgate::tenancy {

class Tenancy {
 public:
  // Opens (or creates) the store under data_dir. The clock must outlive
  // this. `fs`: the store's file system (null: the machine's; tests fail it).
  explicit Tenancy(const std::string& data_dir, const WallClock& clock = SystemClock::instance(),
                   ResponseLimits response_limits = {}, std::shared_ptr<rocksdb::FileSystem> fs = nullptr,
                   HeldRecordsOptions held = {});

  std::optional<Principal> authenticate(std::string_view key) const {
    return keys_.authenticate(key);
  }
  // Quotas::arrive: before a request's body is parsed.
  std::optional<Refusal> arrive(const Tenant& tenant) { return quotas_.arrive(tenant); }
  // Uses the tenant's current plan and limits.
  Admission admit(const Tenant& tenant, const Estimate& estimate);
  // Settles the ticket (always, so its slot is freed), prices `record` by the
  // plan captured at admission, and records it durably. The cost counts
  // against the monthly spend cap only when the record is written
  // (kRecorded, or kHeld once written); a duplicate or a refused record adds
  // nothing. When the store cannot write, the record is held and retried
  // (held_records.h) and billing_fault() is set until it is written. Throws
  // kInvariantViolated for a record whose prompt split does not add up,
  // kInvalidArgument if the record is not the ticket's tenant's.
  RecordOutcome finish(const Ticket& ticket, LedgerRecord record);

  // Set while the ledger cannot write: no request may be admitted (the
  // bill fails closed), and this is what to tell the client and /health.
  std::optional<std::string> billing_fault() const { return held_.fault(); }
  HeldRecordsStats held_stats() const { return held_.stats(); }

  Store& store() { return store_; }
  TenantRegistry& tenants() { return tenants_; }
  ApiKeys& keys() { return keys_; }
  Quotas& quotas() { return quotas_; }
  Ledger& ledger() { return ledger_; }
  ResponseStore& responses() { return responses_; }

 private:
  Store store_;
  TenantRegistry tenants_;
  ApiKeys keys_;
  Ledger ledger_;
  Quotas quotas_;
  ResponseStore responses_;
  HeldRecords held_;  // last: its thread writes through ledger_ and quotas_
};

}  // namespace kvgate::tenancy
