// Ledger records the store could not write (its disk full or failing),
// held in memory and written by a thread of their own once the store takes
// writes again. The bill fails closed around them: while any record is
// held, Tenancy refuses new requests (billing_fault), so what is held is at
// most what was already running when the disk failed, and each held
// record's cost stays held against its tenant's spend cap until it is
// written, as if it were spent.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "tenancy/ledger.h"
#include "tenancy/quota.h"
#include "tenancy/store.h"

namespace kvgate::tenancy {

struct HeldRecordsOptions {
  // More than a server ever has in flight (admission is closed while any is
  // held); past it a record is dropped, printed whole to stderr, so that the
  // operator can still bill it.
  size_t capacity = 65536;
  std::chrono::milliseconds first_retry{50};
  std::chrono::milliseconds max_retry{2000};  // the wait doubles up to this
};

struct HeldRecordsStats {
  uint64_t pending = 0;  // held now, not yet written
  uint64_t held = 0;     // records held since start
  uint64_t written = 0;  // of them, written on a retry
  uint64_t dropped = 0;  // past the capacity, or still held at shutdown
  uint64_t retries = 0;  // write attempts after a failure
};

class HeldRecords {
 public:
  HeldRecords(Store& store, Ledger& ledger, Quotas& quotas, HeldRecordsOptions options = {});
  // One last attempt; records still held are printed to stderr and dropped.
  ~HeldRecords();
  HeldRecords(const HeldRecords&) = delete;
  HeldRecords& operator=(const HeldRecords&) = delete;

  // Keeps `record` (priced) and its pending spend until the ledger takes it.
  // `cause`: why the write failed, for the log (it may name paths).
  void hold(LedgerRecord record, const PendingSpend& spend, const std::string& cause) ABSL_LOCKS_EXCLUDED(mu_);

  // Set while any record is held: what a client or /health may be told
  // (no path, no RocksDB detail).
  std::optional<std::string> fault() const ABSL_LOCKS_EXCLUDED(mu_);
  HeldRecordsStats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Held {
    LedgerRecord record;
    PendingSpend spend;
  };
  // Records not yet written: held, or taken by the retry thread to write.
  size_t pending() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return held_.size() + writing_; }
  void run() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes `batch` in order; returns what it could not write.
  std::deque<Held> write(std::deque<Held> batch) ABSL_LOCKS_EXCLUDED(mu_);
  static void print_dropped(const Held& h, const char* why);

  Store& store_;
  Ledger& ledger_;
  Quotas& quotas_;
  const HeldRecordsOptions options_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Held> held_ ABSL_GUARDED_BY(mu_);
  size_t writing_ ABSL_GUARDED_BY(mu_) = 0;  // taken out of held_ by the retry thread, not yet written
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  HeldRecordsStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread retry_;  // last: started once the rest is built
};

}  // namespace kvgate::tenancy
