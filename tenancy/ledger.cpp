// Group commit, leader/follower (as in LevelDB's DBImpl::Write):
//
//  - every record() call enqueues a Writer on queue_ and waits;
//  - the Writer at the front is the leader: it takes the whole queue (up to
//    kMaxGroup), drops mu_, checks the request ids against the id index,
//    writes all new records in one WriteBatch with sync=true, retakes mu_,
//    marks the group done and wakes the next front Writer, who leads the next
//    group made of everyone who arrived during this sync.
//
// So one fsync carries as many records as there are waiting writers, and
// throughput scales with concurrency while each caller still returns only
// after its own record is durable.
//
// Invariants:
//  - only the current leader reads or writes the ledger families, so the
//    "is this id recorded?" check and the write cannot race (idempotence);
//  - within a group, a repeated id is recorded once; later copies are
//    reported kAlreadyRecorded;
//  - a record is written once, to both families in one batch, and never
//    overwritten: kLedgerById and kLedgerByTime always hold the same ids;
//  - the same batch adds the new records to their hours' rollups, so a
//    rollup in kUsageByHour is always the sum of its hour's records (only
//    the leader reads and rewrites them, like the id check).
//  - a Writer lives on its caller's stack; it is touched by the leader only
//    before `done` is set under mu_, and notified under mu_, so the caller
//    never returns while the leader still holds a pointer to it.
#include "tenancy/ledger.h"

#include <rocksdb/iterator.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <unordered_set>

#include "tenancy/error.h"
#include "tenancy/utc_calendar.h"

namespace kvgate::tenancy {
namespace {

constexpr size_t kMaxGroup = 1024;

// A record's hour: validate() keeps its times at or after the epoch, so
// no period needs to reach below 0 and every hour here is >= 0.
int64_t hour_of(int64_t finish_ns) { return finish_ns / kHourNs * kHourNs; }

// b + w, or INT64_MAX where that overflows.
int64_t saturating_next(int64_t b, int64_t w) { return b > INT64_MAX - w ? INT64_MAX : b + w; }

// The whole hours inside [from, to) (0 <= from < to): [first, last).
std::optional<std::pair<int64_t, int64_t>> whole_hours(int64_t from, int64_t to) {
  int64_t first = hour_of(from);
  if (first < from) {
    if (first > INT64_MAX - kHourNs) return std::nullopt;
    first += kHourNs;
  }
  const int64_t last = hour_of(to);
  if (first >= last) return std::nullopt;
  return std::pair{first, last};
}

}  // namespace

Ledger::Ledger(Store& store) : store_(store) {
  if (store_.opened_version() < 2) build_rollups();
}

// A Writer's fields, by who may touch them when:
//  - request_id, time_key, value: set by the owner before it is queued,
//    then only read (by the leader too);
//  - done: guarded by the Ledger's mu_. It cannot be ABSL_GUARDED_BY: a
//    Writer is no member of the Ledger, so the annotation has no object to
//    find mu_ through ("Ledger::mu_" in it names a mutex that is never held,
//    and every access warns, locked or not). record() touches it only with
//    mu_ held;
//  - outcome, error: written by the leader (in commit_group, without mu_)
//    before it sets done under mu_; read by the owner only after it has seen
//    done under mu_.
struct Ledger::Writer {
  std::string request_id;
  std::string time_key;
  std::string value;
  std::string tenant_id;
  int64_t hour_ns = 0;  // the UTC hour its record is rolled up into
  UsageTotals delta;    // what it adds there
  bool done = false;
  RecordOutcome outcome = RecordOutcome::kRecorded;
  std::exception_ptr error;
  CondVar cv;
};

RecordOutcome Ledger::record(const LedgerRecord& r) {
  validate(r);
  Writer w;
  w.request_id = r.request_id;
  w.time_key = ledger_time_key(r.tenant_id, r.finish_ns, r.request_id);
  w.value = encode_ledger_record(r);
  w.tenant_id = r.tenant_id;
  w.hour_ns = hour_of(r.finish_ns);
  add_to_totals(&w.delta, r);

  {
    MutexLock lock(mu_);
    queue_.push_back(&w);
    while (!w.done && queue_.front() != &w) w.cv.wait(mu_);
    if (!w.done) {
      const size_t n = std::min(queue_.size(), kMaxGroup);
      const std::vector<Writer*> group(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
      // The leader syncs without the lock, so the next group can queue up;
      // commit_group cannot throw, so `lock` always finds mu_ held again.
      mu_.unlock();
      commit_group(group);
      mu_.lock();
      for (size_t i = 0; i < n; ++i) {
        Writer* done = queue_.front();
        queue_.pop_front();
        done->done = true;
        if (done != &w) done->cv.notify_one();
      }
      if (!queue_.empty()) queue_.front()->cv.notify_one();
    }
  }
  if (w.error) std::rethrow_exception(w.error);
  return w.outcome;
}

void Ledger::commit_group(const std::vector<Writer*>& group) noexcept {
  try {
    rocksdb::ColumnFamilyHandle* by_id = store_.cf(Family::kLedgerById);
    rocksdb::ColumnFamilyHandle* by_time = store_.cf(Family::kLedgerByTime);
    std::vector<rocksdb::Slice> ids;
    ids.reserve(group.size());
    for (const Writer* w : group) ids.emplace_back(w->request_id);
    std::vector<std::string> found;
    const std::vector<rocksdb::Status> st = store_.db()->MultiGet(
        rocksdb::ReadOptions(), std::vector<rocksdb::ColumnFamilyHandle*>(group.size(), by_id),
        ids, &found);

    rocksdb::WriteBatch batch;
    std::unordered_set<std::string_view> in_batch;
    std::vector<const Writer*> fresh;
    for (size_t i = 0; i < group.size(); ++i) {
      Writer* w = group[i];
      if (st[i].ok() || !in_batch.insert(w->request_id).second) {
        w->outcome = RecordOutcome::kAlreadyRecorded;
        continue;
      }
      check_status(st[i].IsNotFound() ? rocksdb::Status::OK() : st[i], "ledger id lookup");
      check_status(batch.Put(by_id, w->request_id, w->time_key), "ledger batch");
      check_status(batch.Put(by_time, w->time_key, w->value), "ledger batch");
      w->outcome = RecordOutcome::kRecorded;
      fresh.push_back(w);
    }
    if (!fresh.empty()) {
      add_rollups(fresh, &batch);
      store_.write(&batch, /*sync=*/true);
      commits_.fetch_add(1, std::memory_order_relaxed);
      records_.fetch_add(fresh.size(), std::memory_order_relaxed);
    }
  } catch (...) {
    // Nothing of this group is known to be durable: every caller hears it.
    const std::exception_ptr e = std::current_exception();
    for (Writer* w : group) w->error = e;
  }
}

std::optional<LedgerRecord> Ledger::find(std::string_view request_id) const {
  const std::optional<std::string> time_key = store_.get(Family::kLedgerById, request_id);
  if (!time_key) return std::nullopt;
  const std::optional<std::string> v = store_.get(Family::kLedgerByTime, *time_key);
  if (!v) {
    throw Error(ErrorCode::kCorrupt,
                "ledger id index names a missing record for " + std::string(request_id));
  }
  return decode_ledger_record(*v);
}

void Ledger::each_between(Family f, std::string_view tenant_id, int64_t from_ns, int64_t to_ns, const char* what,
                          const std::function<void(std::string_view key, std::string_view value)>& fn) const {
  const std::string start = ledger_time_key_prefix(tenant_id, from_ns);
  const std::string end = ledger_time_key_prefix(tenant_id, to_ns);
  const rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(store_.db()->NewIterator(ro, store_.cf(f)));
  for (it->Seek(start); it->Valid(); it->Next()) fn(it->key().ToStringView(), it->value().ToStringView());
  check_status(it->status(), what);
}

void Ledger::scan(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
                  const std::function<void(const LedgerRecord&)>& fn) const {
  if (from_ns >= to_ns) return;
  each_between(Family::kLedgerByTime, tenant_id, from_ns, to_ns, "scanning ledger",
               [&](std::string_view, std::string_view value) { fn(decode_ledger_record(value)); });
}

void Ledger::add_rollups(const std::vector<const Writer*>& fresh, rocksdb::WriteBatch* batch) const {
  struct Hour {
    const Writer* first;  // names the hour: its tenant and start
    UsageTotals added;
  };
  std::map<std::string, Hour> hours;
  for (const Writer* w : fresh) {
    Hour& h = hours.try_emplace(ledger_time_key_prefix(w->tenant_id, w->hour_ns), Hour{w, {}}).first->second;
    add_totals(&h.added, w->delta);
  }
  rocksdb::ColumnFamilyHandle* by_hour = store_.cf(Family::kUsageByHour);
  std::vector<rocksdb::Slice> keys;
  keys.reserve(hours.size());
  for (const auto& [key, h] : hours) keys.emplace_back(key);
  std::vector<std::string> stored;
  const std::vector<rocksdb::Status> st = store_.db()->MultiGet(
      rocksdb::ReadOptions(), std::vector<rocksdb::ColumnFamilyHandle*>(keys.size(), by_hour), keys, &stored);
  size_t i = 0;
  for (const auto& [key, h] : hours) {
    if (!st[i].IsNotFound()) check_status(st[i], "usage rollup lookup");
    UsageTotals t = st[i].ok() ? hour_totals(h.first->tenant_id, h.first->hour_ns, stored[i]) : UsageTotals{};
    add_totals(&t, h.added);
    check_status(batch->Put(by_hour, key, encode_usage_totals(t)), "ledger batch");
    ++i;
  }
}

UsageTotals Ledger::hour_totals(std::string_view tenant_id, int64_t hour_ns, std::string_view stored) const {
  try {
    return decode_usage_totals(stored);
  } catch (const Error&) {
    UsageTotals t;
    scan(tenant_id, hour_ns, hour_ns + kHourNs, [&](const LedgerRecord& r) { add_to_totals(&t, r); });
    return t;
  }
}

void Ledger::scan_hours(std::string_view tenant_id, int64_t from_ns, int64_t to_ns, const HourFn& fn) const {
  std::optional<int64_t> hour;
  UsageTotals t;
  scan(tenant_id, from_ns, to_ns, [&](const LedgerRecord& r) {
    const int64_t h = hour_of(r.finish_ns);
    if (hour && *hour != h) {  // scan is in finish order
      fn(*hour, t);
      t = {};
    }
    hour = h;
    add_to_totals(&t, r);
  });
  if (hour) fn(*hour, t);
}

void Ledger::for_each_hour(std::string_view tenant_id, int64_t from_ns, int64_t to_ns, const HourFn& fn) const {
  from_ns = std::max<int64_t>(from_ns, 0);
  if (from_ns >= to_ns) return;
  const std::optional<std::pair<int64_t, int64_t>> whole = whole_hours(from_ns, to_ns);
  if (!whole) return scan_hours(tenant_id, from_ns, to_ns, fn);
  const auto [first, last] = *whole;
  scan_hours(tenant_id, from_ns, first, fn);
  each_between(Family::kUsageByHour, tenant_id, first, last, "reading usage rollups",
               [&](std::string_view key, std::string_view value) {
                 const int64_t hour = ledger_key_time(key, tenant_id);
                 fn(hour, hour_totals(tenant_id, hour, value));
               });
  scan_hours(tenant_id, last, to_ns, fn);
}

UsageTotals Ledger::usage(std::string_view tenant_id, int64_t from_ns, int64_t to_ns) const {
  UsageTotals t;
  for_each_hour(tenant_id, from_ns, to_ns, [&](int64_t, const UsageTotals& h) { add_totals(&t, h); });
  return t;
}

std::vector<UsageBucket> Ledger::usage_buckets(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
                                               int64_t width_ns, size_t max_buckets) const {
  if (width_ns <= 0 || width_ns % kHourNs != 0)
    throw Error(ErrorCode::kInvalidArgument, "usage bucket width must be a whole number of hours");
  std::vector<UsageBucket> out;
  from_ns = std::max<int64_t>(from_ns, 0);
  if (from_ns >= to_ns || max_buckets == 0) return out;
  const int64_t first = from_ns / width_ns * width_ns;
  for (int64_t b = first; b < to_ns && out.size() < max_buckets;) {
    const int64_t next = saturating_next(b, width_ns);
    out.push_back({std::max(b, from_ns), std::min(next, to_ns), {}});
    if (next == INT64_MAX) break;
    b = next;
  }
  for_each_hour(tenant_id, from_ns, out.back().end_ns, [&](int64_t hour, const UsageTotals& h) {
    add_totals(&out[static_cast<size_t>((hour - first) / width_ns)].totals, h);
  });
  return out;
}

std::vector<DailyUsage> Ledger::usage_by_day(std::string_view tenant_id, int64_t from_ns,
                                             int64_t to_ns) const {
  std::vector<DailyUsage> days;
  int64_t current_day = 0;
  for_each_hour(tenant_id, from_ns, to_ns, [&](int64_t hour, const UsageTotals& h) {
    const int64_t day = utc_day_start_ns(hour);
    if (days.empty() || day != current_day) {
      days.push_back({utc_date(hour), {}});
      current_day = day;
    }
    add_totals(&days.back().totals, h);
  });
  return days;
}

// Streams every record once: the records are in (tenant, time) order, so
// each hour's sum is complete when the next hour starts, and is written
// whole (a Put, never an add). A crash part way leaves version 1 and
// rollups that the next start simply writes again; the last batch carries
// the new version.
void Ledger::build_rollups() {
  rocksdb::ColumnFamilyHandle* by_hour = store_.cf(Family::kUsageByHour);
  rocksdb::WriteBatch batch;
  std::string key;  // the current hour's rollup key
  UsageTotals t;
  auto put = [&] {
    if (key.empty()) return;
    check_status(batch.Put(by_hour, key, encode_usage_totals(t)), "usage rollup migration");
    if (batch.Count() >= 4096) {
      store_.write(&batch, /*sync=*/false);
      batch.Clear();
    }
  };
  std::unique_ptr<rocksdb::Iterator> it(store_.db()->NewIterator(rocksdb::ReadOptions(), store_.cf(Family::kLedgerByTime)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const LedgerRecord r = decode_ledger_record(it->value().ToStringView());
    std::string k = ledger_time_key_prefix(r.tenant_id, hour_of(r.finish_ns));
    if (k != key) {
      put();
      key = std::move(k);
      t = {};
    }
    add_to_totals(&t, r);
  }
  check_status(it->status(), "scanning ledger for the usage rollups");
  put();
  store_.put_schema_version(&batch);
  store_.write(&batch, /*sync=*/true);
}

void Ledger::export_csv(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
                        std::ostream& out) const {
  write_csv_header(out);
  scan(tenant_id, from_ns, to_ns, [&](const LedgerRecord& r) { write_csv_row(out, r); });
}

}  // namespace kvgate::tenancy
