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
//    overwritten: kLedgerById and kLedgerByTime always hold the same ids.
//  - a Writer lives on its caller's stack; it is touched by the leader only
//    before `done` is set under mu_, and notified under mu_, so the caller
//    never returns while the leader still holds a pointer to it.
#include "tenancy/ledger.h"

#include <rocksdb/iterator.h>

#include <exception>
#include <map>
#include <memory>
#include <unordered_set>

#include "tenancy/checked_math.h"
#include "tenancy/error.h"
#include "tenancy/utc_calendar.h"

namespace kvgate::tenancy {
namespace {
constexpr size_t kMaxGroup = 1024;
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
    uint64_t fresh = 0;
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
      ++fresh;
    }
    if (fresh > 0) {
      store_.write(&batch, /*sync=*/true);
      commits_.fetch_add(1, std::memory_order_relaxed);
      records_.fetch_add(fresh, std::memory_order_relaxed);
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

void Ledger::scan(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
                  const std::function<void(const LedgerRecord&)>& fn) const {
  if (from_ns >= to_ns) return;
  const std::string start = ledger_time_key_prefix(tenant_id, from_ns);
  const std::string end = ledger_time_key_prefix(tenant_id, to_ns);
  const rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(store_.db()->NewIterator(ro, store_.cf(Family::kLedgerByTime)));
  for (it->Seek(start); it->Valid(); it->Next()) {
    fn(decode_ledger_record(it->value().ToStringView()));
  }
  check_status(it->status(), "scanning ledger");
}

void add_to_totals(UsageTotals* t, const LedgerRecord& r) {
  t->requests += 1;
  TokenUsage& s = t->tokens;
  s.prompt_tokens = sat_add(s.prompt_tokens, r.tokens.prompt_tokens);
  s.cached_device = sat_add(s.cached_device, r.tokens.cached_device);
  s.cached_host = sat_add(s.cached_host, r.tokens.cached_host);
  s.cached_disk = sat_add(s.cached_disk, r.tokens.cached_disk);
  s.fresh_prefill = sat_add(s.fresh_prefill, r.tokens.fresh_prefill);
  s.cache_written = sat_add(s.cache_written, r.tokens.cache_written);
  s.output_tokens = sat_add(s.output_tokens, r.tokens.output_tokens);
  s.cache_write_5m = sat_add(s.cache_write_5m, r.tokens.cache_write_5m);
  s.cache_write_1h = sat_add(s.cache_write_1h, r.tokens.cache_write_1h);
  t->cost_micros = sat_add(t->cost_micros, r.cost_micros);
}

UsageTotals Ledger::usage(std::string_view tenant_id, int64_t from_ns, int64_t to_ns) const {
  UsageTotals t;
  scan(tenant_id, from_ns, to_ns, [&](const LedgerRecord& r) { add_to_totals(&t, r); });
  return t;
}

std::vector<DailyUsage> Ledger::usage_by_day(std::string_view tenant_id, int64_t from_ns,
                                             int64_t to_ns) const {
  std::vector<DailyUsage> days;
  int64_t current_day = 0;
  scan(tenant_id, from_ns, to_ns, [&](const LedgerRecord& r) {
    const int64_t day = utc_day_start_ns(r.finish_ns);
    if (days.empty() || day != current_day) {  // scan is in finish order
      days.push_back({utc_date(r.finish_ns), {}});
      current_day = day;
    }
    add_to_totals(&days.back().totals, r);
  });
  return days;
}

void Ledger::export_csv(std::string_view tenant_id, int64_t from_ns, int64_t to_ns,
                        std::ostream& out) const {
  write_csv_header(out);
  scan(tenant_id, from_ns, to_ns, [&](const LedgerRecord& r) { write_csv_row(out, r); });
}

}  // namespace kvgate::tenancy
