// The retry thread sleeps until a record is held, then, at a growing
// interval, asks RocksDB to resume (a failed write leaves it refusing all
// writes) and writes the held records through the ledger's group commit, in
// the order they were held. A record it writes settles its spend as
// Tenancy::finish would have; one whose id is found already recorded (the
// failed write did land) cancels it.
#include "tenancy/held_records.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tenancy/error.h"

namespace kvgate::tenancy {

HeldRecords::HeldRecords(Store& store, Ledger& ledger, Quotas& quotas, HeldRecordsOptions options)
    : store_(store), ledger_(ledger), quotas_(quotas), options_(options), retry_([this] { run(); }) {}

HeldRecords::~HeldRecords() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  retry_.join();
  std::deque<Held> left;
  {
    MutexLock lock(mu_);
    left.swap(held_);
  }
  if (left.empty()) return;
  left = write(std::move(left));  // the disk may be back
  MutexLock lock(mu_);
  for (const Held& h : left) {
    print_dropped(h, "still unwritten at shutdown");
    quotas_.cancel_spend(h.spend);
    ++stats_.dropped;
  }
}

void HeldRecords::hold(LedgerRecord record, const PendingSpend& spend, const std::string& cause) {
  MutexLock lock(mu_);
  if (pending() >= options_.capacity) {
    print_dropped({std::move(record), spend}, "past the held-record capacity");
    quotas_.cancel_spend(spend);
    ++stats_.dropped;
    return;
  }
  if (pending() == 0)
    std::fprintf(stderr, "kvgate: ledger: cannot write (%s); new requests are refused until it can\n",
                 cause.c_str());
  held_.push_back({std::move(record), spend});
  ++stats_.held;
  cv_.notify_all();
}

std::optional<std::string> HeldRecords::fault() const {
  MutexLock lock(mu_);
  const size_t n = pending();
  if (n == 0) return std::nullopt;
  return "the billing ledger cannot write; " + std::to_string(n) +
         " finished request(s) wait to be recorded, and no new request is taken until they are";
}

HeldRecordsStats HeldRecords::stats() const {
  MutexLock lock(mu_);
  HeldRecordsStats s = stats_;
  s.pending = pending();
  return s;
}

void HeldRecords::run() {
  MutexLock lock(mu_);
  std::chrono::milliseconds wait = options_.first_retry;
  while (!stop_) {
    if (held_.empty()) {
      wait = options_.first_retry;
      cv_.wait(mu_);
      continue;
    }
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!stop_ && cv_.wait_until(mu_, deadline)) {
    }
    if (stop_) break;
    std::deque<Held> batch;
    batch.swap(held_);
    writing_ = batch.size();
    ++stats_.retries;
    std::deque<Held> left;
    {
      MutexUnlock unlock(mu_);
      store_.resume();
      left = write(std::move(batch));
    }
    writing_ = 0;
    if (left.empty()) {
      if (held_.empty()) std::fprintf(stderr, "kvgate: ledger: writing again; every held record is recorded\n");
      continue;
    }
    // Back in front, in their order, before anything held meanwhile.
    held_.insert(held_.begin(), std::make_move_iterator(left.begin()), std::make_move_iterator(left.end()));
    wait = std::min(wait * 2, options_.max_retry);
  }
}

std::deque<HeldRecords::Held> HeldRecords::write(std::deque<Held> batch) {
  while (!batch.empty()) {
    const Held& h = batch.front();
    RecordOutcome outcome;
    try {
      outcome = ledger_.record(h.record);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kIo) return batch;  // still failing: keep it and all after it
      // Validated when it was first recorded, so this cannot happen; drop
      // it loudly rather than retry it forever.
      print_dropped(h, e.what());
      quotas_.cancel_spend(h.spend);
      MutexLock lock(mu_);
      ++stats_.dropped;
      batch.pop_front();
      continue;
    }
    if (outcome == RecordOutcome::kRecorded)
      quotas_.commit_spend(h.spend);
    else
      quotas_.cancel_spend(h.spend);
    batch.pop_front();
    MutexLock lock(mu_);
    ++stats_.written;
  }
  return batch;
}

void HeldRecords::print_dropped(const Held& h, const char* why) {
  std::ostringstream row;
  write_csv_row(row, h.record);
  std::fprintf(stderr, "kvgate: ledger: DROPPED record (%s), as the usage export's CSV: %s", why, row.str().c_str());
}

}  // namespace kvgate::tenancy
