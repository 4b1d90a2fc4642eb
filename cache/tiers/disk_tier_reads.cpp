// The disk tier's reads: get (from the queue or RocksDB), get_many, contains, and drop_corrupt for what a reader found bad.
#include <rocksdb/options.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "cache/tiers/disk_db.h"
#include "cache/tiers/disk_tier.h"
#include "cache/tiers/disk_tier_internal.h"

namespace kvgate::cache {

// --- Reading -------------------------------------------------------------------

std::optional<std::vector<std::byte>> DiskTier::get(const TierKey& key) {
  policies::EntryId id = -1;
  std::shared_ptr<Pending> waiting;
  {
    MutexLock lock(mu_);
    if (auto q = queued_.find(key); q != queued_.end() && q->second->seq != 0) {
      waiting = q->second;
      ++counters_.hits;
    } else if (auto it = index_.find(key); it != index_.end()) {
      id = it->second;
    } else {
      ++counters_.misses;
      return std::nullopt;
    }
  }
  // Still waiting for the writer: served from memory, copied without the
  // lock. Its bytes never change once queued; the shared_ptr keeps them alive.
  if (waiting) return waiting->record;
  const auto kb = key.bytes();
  rocksdb::PinnableSlice value;
  rocksdb::Status s;
  // Every record carries XXH3 checksums of its own, which check_record
  // verifies before a byte is used; RocksDB's CRC32c of the same bytes (in
  // software in Debian's build) was most of a read's time.
  rocksdb::ReadOptions ro;
  ro.verify_checksums = false;
  {
    ReaderMutexLock readers(db_mu_);
    s = db_->db ? db_->db->Get(ro, db_->records, slice(kb), &value)
                : rocksdb::Status::Incomplete("the database is being reopened after a failed write");
  }
  MutexLock lock(mu_);
  auto it = index_.find(key);
  const bool same = it != index_.end() && it->second == id;
  if (!s.ok()) {
    ++counters_.misses;
    if (s.IsNotFound()) {
      if (same) remove_entry_locked(id);  // indexed but gone: the index is wrong, forget it
    } else if (!s.IsIncomplete()) {
      log_throttled("reading a record failed: " + s.ToString());
    }
    return std::nullopt;
  }
  if (!same) {
    // Evicted (or replaced) while the read was out of the lock: what the
    // tier no longer holds it does not serve, so a record that then fails
    // verification is always one drop_corrupt finds to count.
    ++counters_.misses;
    return std::nullopt;
  }
  ++counters_.hits;
  policy_->on_hit(id);
  policy_->on_release(id);
  const auto* b = reinterpret_cast<const std::byte*>(value.data());
  return std::vector<std::byte>(b, b + value.size());
}

std::vector<std::optional<std::vector<std::byte>>> DiskTier::get_many(std::span<const TierKey> keys,
                                                                      const OnRead& on_read) {
  std::vector<std::optional<std::vector<std::byte>>> out(keys.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < keys.size(); i = next++) {
      out[i] = get(keys[i]);
      if (on_read) on_read(i, out[i]);
    }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(kReadsInFlight, keys.size()); ++t) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
  return out;
}

bool DiskTier::contains(const TierKey& key) const {
  MutexLock lock(mu_);
  return index_.contains(key) || queued_.contains(key);
}

void DiskTier::drop_corrupt(const TierKey& key, RecordFault why) {
  MutexLock wl(write_mu_);
  std::vector<TierKey> doomed;
  {
    MutexLock lock(mu_);
    if (auto q = queued_.find(key); q != queued_.end()) {
      q->second->cancelled = true;
      queued_bytes_ -= q->second->bytes;
      queued_.erase(q);
      ++counters_.faults[std::string(fault_name(why))];
      return;
    }
    auto it = index_.find(key);
    if (it == index_.end()) return;
    remove_entry_locked(it->second);
    ++counters_.faults[std::string(fault_name(why))];
    doomed.push_back(key);
  }
  delete_keys(doomed, "dropping a corrupt entry");
}

}  // namespace kvgate::cache
