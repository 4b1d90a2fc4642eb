// Wiring only. The order in finish() matters: the quota settle comes first
// and cannot be skipped, so a bad record never leaks a concurrency slot; the
// ledger write comes last, so the caller hears "recorded" only when it is.
// The request's cost stays held against the spend cap while the ledger
// decides, and is spent only if the ledger wrote a new record: a duplicate
// or a refused record adds nothing, so the spend in memory counts exactly
// the records the ledger holds, as a restart would read them back.
// The monthly spend cap learns what earlier processes billed from the ledger.
#include "tenancy/tenancy.h"

#include "tenancy/error.h"

namespace kvgate::tenancy {

Tenancy::Tenancy(const std::string& data_dir, const WallClock& clock, ResponseLimits response_limits,
                 std::shared_ptr<rocksdb::FileSystem> fs, HeldRecordsOptions held)
    : store_(data_dir, std::move(fs)),
      tenants_(store_, clock),
      keys_(store_, tenants_, clock),
      ledger_(store_),
      quotas_(clock, [this](const std::string& tenant, int64_t from, int64_t to) {
        return ledger_.usage(tenant, from, to).cost_micros;
      }),
      responses_(store_, clock, response_limits),
      held_(store_, ledger_, quotas_, held) {}

Admission Tenancy::admit(const Tenant& tenant, const Estimate& estimate) {
  return quotas_.admit(tenant, tenants_.get_plan(tenant.plan_id), estimate);
}

RecordOutcome Tenancy::finish(const Ticket& ticket, LedgerRecord record) {
  const PendingSpend spend = quotas_.settle_pending(ticket, record.tokens);
  RecordOutcome outcome = RecordOutcome::kAlreadyRecorded;
  try {
    if (record.tenant_id != ticket.tenant_id) {
      throw Error(ErrorCode::kInvalidArgument,
                  "ledger record " + record.request_id + " is for tenant '" + record.tenant_id +
                      "' but its ticket is '" + ticket.tenant_id + "'");
    }
    record.cost_micros = spend.cost_micros;
    outcome = ledger_.record(record);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kIo) {  // the store cannot write: hold it, spend still held, and fail closed
      held_.hold(std::move(record), spend, e.what());
      return RecordOutcome::kHeld;
    }
    quotas_.cancel_spend(spend);
    throw;
  } catch (...) {
    quotas_.cancel_spend(spend);
    throw;
  }
  if (outcome == RecordOutcome::kRecorded) {
    quotas_.commit_spend(spend);
  } else {
    quotas_.cancel_spend(spend);
  }
  return outcome;
}

}  // namespace kvgate::tenancy
