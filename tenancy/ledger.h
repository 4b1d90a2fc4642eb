// The billing ledger: one durable, never-rewritten record per finished
// request, plus per-tenant usage reports and CSV export.
//
// Each commit also adds its records to per-tenant, per-UTC-hour totals
// (Family::kUsageByHour) in the same batch, so a report over any period
// reads one rollup per whole hour and scans records only in the partial
// hours at its two ends: its cost grows with the period's hours, not with
// how many requests the tenant made.
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
#include "tenancy/usage_totals.h"

namespace kvgate::tenancy {

enum class RecordOutcome {
  kRecorded,         // written and synced by this call
  kAlreadyRecorded,  // a record with this request id exists; it was not touched
  kHeld,             // the store could not write it: held in memory and retried (Tenancy::finish)
};

inline constexpr int64_t kHourNs = 3'600'000'000'000;
inline constexpr int64_t kDayNs = 24 * kHourNs;

struct DailyUsage {
  std::string date;  // UTC, "YYYY-MM-DD"
  UsageTotals totals;
};

// One bucket of a report: [start_ns, end_ns), the bucket's UTC-aligned
// span clipped to the period asked for.
struct UsageBucket {
  int64_t start_ns = 0, end_ns = 0;
  UsageTotals totals;
};

struct GroupCommitStats {
  uint64_t commits = 0;  // synced WriteBatches
  uint64_t records = 0;  // records they carried
};

class Ledger {
 public:
  // Migrates a version-1 store (records without rollups) by building the
  // rollups from every record, in one batch with the new schema version.
  explicit Ledger(Store& store);

  // Validates `r` (throws kInvariantViolated / kInvalidArgument), then blocks
  // until it is on disk, or finds its request id already recorded. Many
  // threads may call this at once; their records share one synced write.
  RecordOutcome record(const LedgerRecord& r) ABSL_LOCKS_EXCLUDED(mu_);

  std::optional<LedgerRecord> find(std::string_view request_id) const;
  // Records of `tenant_id` finished in [from_ns, to_ns), oldest first.
  void scan(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
            const std::function<void(const LedgerRecord&)>& fn) const;
  // Exactly the sum of scan()'s records, from the rollups.
  UsageTotals usage(std::string_view tenant_id, int64_t from_ns, int64_t to_ns) const;
  // One bucket per `width_ns` (a whole number of hours) that overlaps the
  // period, UTC-aligned, oldest first, at most `max_buckets`; empty ones too.
  std::vector<UsageBucket> usage_buckets(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
                                         int64_t width_ns, size_t max_buckets) const;
  // The UTC days of the period that have records.
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
  // Every entry of `f` (keyed as kLedgerByTime is) of `tenant_id` in
  // [from_ns, to_ns), in key order; `what` names a failed read.
  void each_between(Family f, std::string_view tenant_id, int64_t from_ns, int64_t to_ns, const char* what,
                    const std::function<void(std::string_view key, std::string_view value)>& fn) const;
  // Adds the group's new records to their hours' rollups in `batch`.
  void add_rollups(const std::vector<const Writer*>& fresh, rocksdb::WriteBatch* batch) const;
  // An hour's stored rollup; one that does not decode is summed again from
  // the hour's records (a corrupted rollup costs a scan, never a wrong bill).
  UsageTotals hour_totals(std::string_view tenant_id, int64_t hour_ns, std::string_view stored) const;
  // Calls fn(hour start, totals) for each hour of [from_ns, to_ns) that has
  // records, in order, with only the records inside the period.
  using HourFn = std::function<void(int64_t hour_ns, const UsageTotals&)>;
  void for_each_hour(std::string_view tenant_id, int64_t from_ns, int64_t to_ns, const HourFn& fn) const;
  void scan_hours(std::string_view tenant_id, int64_t from_ns, int64_t to_ns, const HourFn& fn) const;
  void build_rollups();

  Store& store_;
  Mutex mu_;
  std::deque<Writer*> queue_ ABSL_GUARDED_BY(mu_);  // front() is the leader
  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> records_{0};
};

}  // namespace kvgate::tenancy
