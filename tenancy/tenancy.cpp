// Wiring only. The order in finish() matters: the quota settle comes first
// and cannot be skipped, so a bad record never leaks a concurrency slot; the
// ledger write comes last, so the caller hears "recorded" only when it is.
// The monthly spend cap learns what earlier processes billed from the ledger.
#include "tenancy/tenancy.h"

#include "tenancy/error.h"

namespace kvgate::tenancy {

Tenancy::Tenancy(const std::string& data_dir, const Clock& clock)
    : store_(data_dir),
      tenants_(store_, clock),
      keys_(store_, tenants_, clock),
      ledger_(store_),
      quotas_(clock, [this](const std::string& tenant, int64_t from, int64_t to) {
        return ledger_.usage(tenant, from, to).cost_micros;
      }) {}

Admission Tenancy::admit(const Tenant& tenant, const Estimate& estimate) {
  return quotas_.admit(tenant, tenants_.get_plan(tenant.plan_id), estimate);
}

RecordOutcome Tenancy::finish(const Ticket& ticket, LedgerRecord record) {
  const uint64_t cost = quotas_.settle(ticket, record.tokens);
  if (record.tenant_id != ticket.tenant_id) {
    throw Error(ErrorCode::kInvalidArgument, "ledger record " + record.request_id +
                                                 " is for tenant '" + record.tenant_id +
                                                 "' but its ticket is '" + ticket.tenant_id + "'");
  }
  record.cost_micros = cost;
  return ledger_.record(record);
}

}  // namespace kvgate::tenancy
