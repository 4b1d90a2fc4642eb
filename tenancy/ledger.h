// The billing ledger: one durable, never-rewritten record per finished
// request, plus per-tenant usage reports and CSV export.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tenancy/ledger_record.h"
#include "base/mutex.h"
#include "tenancy/store.h"

namespace kvgate::tenancy {

enum class RecordOutcome {
  kRecorded,         // written and synced by this call
  kAlreadyRecorded,  // a record with this request id exists; it was not touched
  kHeld,             // the store could not write it: held in memory and retried (Tenancy::finish)
};

struct UsageTotals {
  uint64_t requests = 0;
  TokenUsage tokens;  // field-wise sums (saturating)
  uint64_t cost_micros = 0;
  bool operator==(const UsageTotals&) const = default;
};

struct DailyUsage {
  std::string date;  // UTC, "YYYY-MM-DD"
  UsageTotals totals;
};

struct GroupCommitStats {
  uint64_t commits = 0;  // synced WriteBatches
  uint64_t records = 0;  // records they carried
};

class Ledger {
 public:
  explicit Ledger(Store& store) : store_(store) {}

  // Validates `r` (throws kInvariantViolated / kInvalidArgument), then blocks
  // until it is on disk, or finds its request id already recorded. Many
  // threads may call this at once; their records share one synced write.
  RecordOutcome record(const LedgerRecord& r) ABSL_LOCKS_EXCLUDED(mu_);

  std::optional<LedgerRecord> find(std::string_view request_id) const;
  // Records of `tenant_id` finished in [from_ns, to_ns), oldest first.
  void scan(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
            const std::function<void(const LedgerRecord&)>& fn) const;
  UsageTotals usage(std::string_view tenant_id, int64_t from_ns, int64_t to_ns) const;
  std::vector<DailyUsage> usage_by_day(std::string_view tenant_id, int64_t from_ns,
                                       int64_t to_ns) const;
  // A header row, then one row per record (same order as scan()).
  void export_csv(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
                  std::ostream& out) const;

  GroupCommitStats stats() const {
    return {commits_.load(std::memory_order_relaxed), records_.load(std::memory_order_relaxed)};
  }

 private:
  struct Writer;
  // Runs without mu_; catches everything, so the leader always retakes it.
  void commit_group(const std::vector<Writer*>& group) noexcept ABSL_LOCKS_EXCLUDED(mu_);

  Store& store_;
  Mutex mu_;
  std::deque<Writer*> queue_ ABSL_GUARDED_BY(mu_);  // front() is the leader
  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> records_{0};
};

void add_to_totals(UsageTotals* t, const LedgerRecord& r);

}  // namespace kvgate::tenancy
