// The disk tier's write path: the queue (enqueue, flush), the writer thread and its batches, and writing to (or reopening) the database.
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "cache/tiers/disk_db.h"
#include "cache/tiers/disk_tier.h"
#include "cache/tiers/disk_tier_internal.h"

#if defined(__SANITIZE_THREAD__)
#define KVGATE_TIERS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KVGATE_TIERS_TSAN 1
#endif
#endif

namespace kvgate::cache {
namespace {

#ifdef KVGATE_TIERS_TSAN
constexpr bool kTsanBuild = true;
#else
constexpr bool kTsanBuild = false;
#endif

constexpr size_t kBatchRecords = 64;
constexpr size_t kBatchBytes = size_t{8} << 20;

}  // namespace

// --- Writing to the database -----------------------------------------------------

void DiskTier::delete_keys(const std::vector<TierKey>& keys, const char* why) {
  if (keys.empty()) return;
  detail::DiskDb& db = writer_db();
  rocksdb::WriteBatch wb;
  for (const TierKey& k : keys) {
    const auto kb = k.bytes();
    wb.Delete(db.records, slice(kb)).PermitUncheckedError();
    wb.Delete(db.index, slice(kb)).PermitUncheckedError();
  }
  std::string not_ready;
  const rocksdb::Status s =
      ready_to_write(&not_ready) ? write_db(&wb, rocksdb::WriteOptions()) : rocksdb::Status::Incomplete(not_ready);
  if (!s.ok()) {
    need_reopen_ = true;
    MutexLock lock(mu_);
    log_throttled(std::string(why) + ": deleting " + std::to_string(keys.size()) + " entries failed: " + s.ToString());
  }
}

rocksdb::Status DiskTier::write_db(rocksdb::WriteBatch* wb, const rocksdb::WriteOptions& wo) {
  // RocksDB is not instrumented: its memtable hands a write to concurrent
  // readers through atomics ThreadSanitizer cannot see, and it would report
  // the memtable's memcpy racing a reader's memcmp. Under TSan every write
  // therefore holds db_mu_ exclusively (readers hold it shared), which makes
  // that order visible; other builds take nothing here.
  if constexpr (kTsanBuild) {
    WriterMutexLock tsan_order(db_mu_);
    return db_->db->Write(wo, wb);
  }
  return writer_db().db->Write(wo, wb);
}

bool DiskTier::ready_to_write(std::string* why) {
  if (!need_reopen_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_reopen_) {
    *why = last_reopen_error_;
    return false;
  }
  WriterMutexLock readers(db_mu_);
  db_->close();
  const rocksdb::Status s = db_->open(dir_, env_);
  if (s.ok()) {
    need_reopen_ = false;
    return true;
  }
  // Still failing (a full disk cannot take the new MANIFEST): open it
  // read-only so that reads go on, and try again after retry_interval.
  db_->close();
  last_reopen_error_ = "the database is read-only until reopening it after a failed write succeeds: " + s.ToString();
  *why = last_reopen_error_;
  next_reopen_ = now + retry_interval_;
  if (!db_->open(dir_, env_, /*read_only=*/true).ok()) db_->close();  // then reads miss too
  return false;
}

void DiskTier::writable_or_throw() {
  std::string why;
  if (!ready_to_write(&why)) throw std::runtime_error("kv disk tier at " + dir_ + ": " + why);
}

// --- The queue and the writer thread -------------------------------------------------------------------

bool DiskTier::enqueue(std::span<const std::byte> record, TenantId owner) {
  const std::optional<RecordHeader> h = read_record_header(record);
  auto p = std::make_shared<Pending>();
  if (h) {
    p->key = TierKey{h->key.scope, h->key.hash};
    p->block = h->key;
  }
  p->owner = owner;
  p->bytes = record.size();
  {
    MutexLock lock(mu_);
    if (!h || h->identity != identity_) {
      ++counters_.refused;
      return false;
    }
    if (index_.contains(p->key) || queued_.contains(p->key)) return false;
    if (chain_broken_locked(p->block) ||
        (queued_bytes_ > 0 && queued_bytes_ + record.size() > write_queue_bytes_)) {
      ++counters_.refused;
      note_failed_locked(p->key);
      return false;
    }
    queued_.emplace(p->key, p);
    queued_bytes_ += record.size();
    failed_.erase(p->key);
  }
  // Claimed; the copy is made without the lock (nobody reads a Pending's
  // bytes before it is in the queue).
  p->record.assign(record.begin(), record.end());
  {
    MutexLock lock(mu_);
    p->seq = ++enqueued_seq_;
    fifo_.push_back(p);
    ++counters_.stored;
  }
  work_cv_.notify_one();
  return true;
}

void DiskTier::writer_loop() {
  for (;;) {
    std::vector<std::shared_ptr<Pending>> batch;
    uint64_t last_seq = 0;
    {
      MutexLock lock(mu_);
      while (!stop_ && fifo_.empty()) work_cv_.wait(mu_);
      if (fifo_.empty()) return;  // stopping, and everything is written
      size_t bytes = 0;
      while (!fifo_.empty() && batch.size() < kBatchRecords &&
             (batch.empty() || bytes + fifo_.front()->bytes <= kBatchBytes)) {
        std::shared_ptr<Pending> p = std::move(fifo_.front());
        fifo_.pop_front();
        last_seq = p->seq;
        if (p->cancelled) continue;
        if (chain_broken_locked(p->block)) {  // its parent's write failed since it was queued
          queued_.erase(p->key);
          queued_bytes_ -= p->bytes;
          p->cancelled = true;
          ++counters_.refused;
          note_failed_locked(p->key);
          continue;
        }
        p->write_seq = next_seq_++;
        bytes += p->bytes;
        batch.push_back(std::move(p));
      }
    }
    if (!batch.empty()) write_batch(batch);
    {
      MutexLock lock(mu_);
      done_seq_ = std::max(done_seq_, last_seq);
    }
    done_cv_.notify_all();
  }
}

void DiskTier::write_batch(std::vector<std::shared_ptr<Pending>>& batch) {
  MutexLock wl(write_mu_);
  detail::DiskDb& db = writer_db();
  rocksdb::WriteBatch wb;
  for (const auto& p : batch) {
    const auto kb = p->key.bytes();
    const rocksdb::Slice value(reinterpret_cast<const char*>(p->record.data()), p->record.size());
    wb.Put(db.records, slice(kb), value).PermitUncheckedError();
    wb.Put(db.index, slice(kb),
           encode_index({digest_, p->owner, p->block.depth, static_cast<uint64_t>(p->record.size()), p->write_seq}))
        .PermitUncheckedError();
  }
  rocksdb::WriteOptions wo;
  wo.sync = false;
  std::string not_ready;
  const rocksdb::Status s = ready_to_write(&not_ready) ? write_db(&wb, wo) : rocksdb::Status::Incomplete(not_ready);

  std::vector<TierKey> doomed;  // written but cancelled meanwhile, or evicted for capacity
  {
    MutexLock lock(mu_);
    if (!s.ok()) {
      need_reopen_ = true;
      ++counters_.write_errors;
      for (const auto& p : batch) {
        if (!p->cancelled) {
          queued_.erase(p->key);
          queued_bytes_ -= p->bytes;
        }
        ++counters_.refused;
        note_failed_locked(p->key);
      }
      log_throttled("writing " + std::to_string(batch.size()) + " records failed, they are not offloaded: " + s.ToString());
      return;
    }
    for (const auto& p : batch) {
      if (p->cancelled) {
        doomed.push_back(p->key);
        continue;
      }
      queued_.erase(p->key);
      queued_bytes_ -= p->bytes;
      if (auto it = index_.find(p->key); it != index_.end()) remove_entry_locked(it->second);  // put_raw_for_test's
      // Depth 0's parent is the chain seed, derived from the secret scope.
      add_entry_locked(p->key, p->owner, p->block.depth, static_cast<int64_t>(p->record.size()),
                       p->block.depth == 0 ? BlockHash{} : p->block.parent);
      ++counters_.persisted;
    }
    evict_over_capacity_locked(doomed);
  }
  // A key doomed here and enqueued again meanwhile is written after this
  // delete: the writer is this thread.
  delete_keys(doomed, "evicting");
}

void DiskTier::flush() {
  MutexLock lock(mu_);
  const uint64_t want = enqueued_seq_;
  while (done_seq_ < want) done_cv_.wait(mu_);
}

// --- Tests: a write that bypasses the queue ------------------------------------------

void DiskTier::put_raw_for_test(const TierKey& key, std::span<const std::byte> value, TenantId owner, int32_t depth) {
  MutexLock wl(write_mu_);
  writable_or_throw();
  detail::DiskDb& db = writer_db();
  uint64_t seq;
  {
    MutexLock lock(mu_);
    seq = next_seq_++;
  }
  const auto kb = key.bytes();
  rocksdb::WriteBatch wb;
  wb.Put(db.records, slice(kb), rocksdb::Slice(reinterpret_cast<const char*>(value.data()), value.size()))
      .PermitUncheckedError();
  wb.Put(db.index, slice(kb), encode_index({digest_, owner, depth, static_cast<uint64_t>(value.size()), seq}))
      .PermitUncheckedError();
  const rocksdb::Status s = write_db(&wb, rocksdb::WriteOptions());
  if (!s.ok()) {
    need_reopen_ = true;
    refuse(dir_, s);
  }
  std::vector<TierKey> doomed;
  {
    MutexLock lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) remove_entry_locked(it->second);
    add_entry_locked(key, owner, depth, static_cast<int64_t>(value.size()));
    evict_over_capacity_locked(doomed);
  }
  delete_keys(doomed, "evicting");
}

}  // namespace kvgate::cache
