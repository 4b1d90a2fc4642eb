// The disk tier: a write queue and its writer thread, the index and its
// policy, over the RocksDB database of disk_db.h.
//
// In memory: index_ maps exactly the persisted entries of this identity to
// their entry ids; the policy knows exactly those, all candidates (nothing on
// disk is leased: a get copies the record out). queued_ maps the keys of
// records waiting in fifo_ or being written (not cancelled) to them.
#include "cache/tiers/disk_tier.h"

#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "cache/tiers/disk_db.h"
#include "policies/eviction/lru_policy.h"

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

using detail::decode_index;
using detail::encode_index;
using detail::IndexValue;
using detail::slice;

constexpr size_t kBatchRecords = 64;
constexpr size_t kBatchBytes = size_t{8} << 20;
constexpr size_t kFailedMemory = 65536;
constexpr auto kLogInterval = std::chrono::seconds(10);

}  // namespace

struct DiskTier::Pending {
  TierKey key;
  BlockKey block;
  TenantId owner = 0;
  size_t bytes = 0;                // the record's size (set before the record is copied in)
  std::vector<std::byte> record;   // immutable once seq is set
  uint64_t seq = 0;        // enqueue order (flush waits on it)
  uint64_t write_seq = 0;  // stored in the index
  // Dropped while queued: never indexed. Guarded by the tier's mu_, which an
  // annotation in this struct cannot name.
  bool cancelled = false;
};

namespace {

[[noreturn]] void refuse(const std::string& dir, const rocksdb::Status& s) {
  throw std::runtime_error("kv disk tier at " + dir + ": " + s.ToString());
}

// Statuses for which moving the directory aside and starting fresh helps: the
// files are bad. Not I/O errors in general: a database locked by a running
// server, or a disk that fails, must not be moved away.
bool movable(const rocksdb::Status& s) {
  return s.IsCorruption() || s.IsInvalidArgument() || s.IsNotFound() || s.IsNotSupported() || s.IsPathNotFound();
}

}  // namespace

// --- Opening -----------------------------------------------------------------

DiskTier::DiskTier(DiskTierOptions&& o)
    : dir_(std::move(o.dir)),
      identity_(o.identity),
      digest_(identity_digest(o.identity)),
      capacity_bytes_(o.capacity_bytes),
      write_queue_bytes_(o.write_queue_bytes),
      move_aside_corrupt_(o.move_aside_corrupt),
      retry_interval_(o.retry_interval),
      env_(o.env),
      listener_(o.listener),
      db_(std::make_unique<detail::DiskDb>()),
      policy_(o.policy ? std::move(o.policy) : policies::make_lru_policy()) {}

std::unique_ptr<DiskTier> DiskTier::open(DiskTierOptions options) {
  if (options.dir.empty()) throw std::invalid_argument("kv disk tier: no directory given");
  if (!options.identity.valid()) throw std::invalid_argument("kv disk tier at " + options.dir + ": invalid KV identity");
  std::unique_ptr<DiskTier> t(new DiskTier(std::move(options)));
  {
    // Nothing else reaches the tier yet; the lock is what lets open_or_move_aside use the database.
    MutexLock wl(t->write_mu_);
    t->open_or_move_aside();
  }
  t->writer_ = std::thread([p = t.get()] { p->writer_loop(); });
  return t;
}

void DiskTier::open_or_move_aside() {
  detail::DiskDb& db = writer_db();
  rocksdb::Status s = db.open(dir_, env_);
  if (s.ok()) {
    try {
      rebuild_index();
    } catch (const rocksdb::Status& bad) {
      s = bad;
      db.close();
    }
  }
  if (s.ok()) return;
  if (!move_aside_corrupt_ || !movable(s)) refuse(dir_, s);

  const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string to = dir_ + ".corrupt-" + std::to_string(now);
  for (int i = 1; std::filesystem::exists(to); ++i) to = dir_ + ".corrupt-" + std::to_string(now) + "-" + std::to_string(i);
  std::error_code ec;
  std::filesystem::rename(dir_, to, ec);
  if (ec)
    throw std::runtime_error("kv disk tier at " + dir_ + ": " + s.ToString() + "; moving it aside to " + to +
                             " failed: " + ec.message());
  std::fprintf(stderr, "kvgate: kv disk tier at %s would not open (%s): moved it aside to %s, starting empty\n",
               dir_.c_str(), s.ToString().c_str(), to.c_str());
  moved_aside_to_ = to;
  s = db.open(dir_, env_);
  if (!s.ok()) refuse(dir_, s);
  try {
    rebuild_index();
  } catch (const rocksdb::Status& bad) {
    db.close();
    refuse(dir_, bad);
  }
}

// Throws the iterator's status when the index cannot be read.
void DiskTier::rebuild_index() {
  detail::DiskDb& db = writer_db();
  MutexLock lock(mu_);
  for (const Entry& e : entries_)
    if (e.live) policy_->on_remove(static_cast<policies::EntryId>(&e - entries_.data()));
  entries_.clear();
  free_ids_.clear();
  index_.clear();
  tenant_blocks_.clear();
  used_bytes_ = 0;
  counters_.foreign = 0;

  struct Found {
    uint64_t seq;
    TierKey key;
    IndexValue v;
  };
  std::vector<Found> found;
  std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), db.index));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    TierKey k;
    const std::optional<IndexValue> v = decode_index(it->value());
    if (!TierKey::from_bytes(it->key().data(), it->key().size(), &k) || !v || v->digest != digest_) {
      ++counters_.foreign;
      continue;
    }
    found.push_back({v->seq, k, *v});
  }
  if (!it->status().ok()) throw it->status();
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.seq < b.seq; });
  for (const Found& f : found) {
    add_entry_locked(f.key, f.v.owner, f.v.depth, static_cast<int64_t>(f.v.bytes));
    next_seq_ = std::max(next_seq_, f.seq + 1);
  }
  // A capacity lowered since: evicted at open, the oldest first.
  std::vector<TierKey> victims;
  evict_over_capacity_locked(victims);
  if (!victims.empty()) {
    rocksdb::WriteBatch wb;
    for (const TierKey& k : victims) {
      const auto kb = k.bytes();
      wb.Delete(db.records, slice(kb)).PermitUncheckedError();
      wb.Delete(db.index, slice(kb)).PermitUncheckedError();
    }
    const rocksdb::Status s = db.db->Write(rocksdb::WriteOptions(), &wb);
    if (!s.ok()) throw s;
  }
}

DiskTier::~DiskTier() {
  if (writer_.joinable()) {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    writer_.join();
  }
  MutexLock wl(write_mu_);
  writer_db().close();
}

detail::DiskDb& DiskTier::writer_db() ABSL_NO_THREAD_SAFETY_ANALYSIS { return *db_; }

// --- Index bookkeeping ---------------------------------------------------------

policies::EntryInfo DiskTier::entry_info(policies::EntryId e) const {
  const Entry& x = entries_[static_cast<size_t>(e)];
  return {x.depth, x.owner, x.bytes, policies::Tier::kDisk, x.key.hash.lo};
}

policies::EntryId DiskTier::add_entry_locked(const TierKey& key, TenantId owner, int32_t depth, int64_t bytes,
                                             const BlockHash& parent) {
  policies::EntryId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<policies::EntryId>(entries_.size());
    entries_.emplace_back();
  }
  entries_[static_cast<size_t>(id)] = Entry{key, owner, depth, bytes, true};
  index_[key] = id;
  ++tenant_blocks_[owner];
  used_bytes_ += bytes;
  policy_->on_insert(id, entry_info(id));
  policy_->on_release(id);
  if (listener_) listener_->on_block_event({BlockEventKind::kStored, -1, key.hash, parent, owner, depth, policies::Tier::kDisk});
  return id;
}

void DiskTier::remove_entry_locked(policies::EntryId id) {
  Entry& e = entries_[static_cast<size_t>(id)];
  if (listener_)
    listener_->on_block_event({BlockEventKind::kRemoved, -1, e.key.hash, {}, e.owner, e.depth, policies::Tier::kDisk});
  policy_->on_remove(id);
  index_.erase(e.key);
  if (--tenant_blocks_[e.owner] == 0) tenant_blocks_.erase(e.owner);
  used_bytes_ -= e.bytes;
  e.live = false;
  free_ids_.push_back(id);
}

void DiskTier::evict_over_capacity_locked(std::vector<TierKey>& doomed) {
  while (used_bytes_ > capacity_bytes_) {
    const std::optional<policies::EntryId> v = policy_->victim();
    if (!v) break;
    if (*v < 0 || static_cast<size_t>(*v) >= entries_.size() || !entries_[static_cast<size_t>(*v)].live)
      throw std::logic_error("kv disk tier: eviction policy '" + std::string(policy_->name()) +
                             "' named a victim that is not an entry");
    doomed.push_back(entries_[static_cast<size_t>(*v)].key);
    remove_entry_locked(*v);
    ++counters_.evicted;
  }
}

bool DiskTier::chain_broken_locked(const BlockKey& key) const {
  return key.depth > 0 && failed_.contains(TierKey{key.scope, key.parent});
}

void DiskTier::note_failed_locked(const TierKey& key) {
  if (!failed_.insert(key).second) return;
  failed_order_.push_back(key);
  while (failed_order_.size() > kFailedMemory) {
    failed_.erase(failed_order_.front());
    failed_order_.pop_front();
  }
}

void DiskTier::log_throttled(const std::string& what) {
  const auto now = std::chrono::steady_clock::now();
  if (logged_ && now - last_log_ < kLogInterval) {
    ++unlogged_;
    return;
  }
  std::string more;
  if (unlogged_ > 0) more = " (" + std::to_string(unlogged_) + " more since the last message)";
  std::fprintf(stderr, "kvgate: kv disk tier at %s: %s (counted; the tier keeps working)%s\n", dir_.c_str(),
               what.c_str(), more.c_str());
  logged_ = true;
  last_log_ = now;
  unlogged_ = 0;
}

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

// --- Writing -------------------------------------------------------------------

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

// --- Purges and flushes --------------------------------------------------------

void DiskTier::writable_or_throw() {
  std::string why;
  if (!ready_to_write(&why)) throw std::runtime_error("kv disk tier at " + dir_ + ": " + why);
}

int64_t DiskTier::purge_foreign() {
  MutexLock wl(write_mu_);
  writable_or_throw();
  detail::DiskDb& db = writer_db();
  std::vector<TierKey> keys;
  std::vector<std::string> odd;  // index keys that are not TierKeys at all
  {
    std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), db.index));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::optional<IndexValue> v = decode_index(it->value());
      if (v && v->digest == digest_) continue;
      TierKey k;
      if (TierKey::from_bytes(it->key().data(), it->key().size(), &k)) keys.push_back(k);
      else odd.push_back(it->key().ToString());
    }
    if (!it->status().ok()) refuse(dir_, it->status());
  }
  {
    MutexLock lock(mu_);
    for (const TierKey& k : keys)  // should none be ours: never delete what the index serves
      if (index_.contains(k)) throw std::logic_error("kv disk tier: a foreign index entry is indexed");
  }
  rocksdb::WriteBatch wb;
  for (const std::string& k : odd) {
    wb.Delete(db.records, k).PermitUncheckedError();
    wb.Delete(db.index, k).PermitUncheckedError();
  }
  if (!odd.empty()) {
    const rocksdb::Status s = write_db(&wb, rocksdb::WriteOptions());
    if (!s.ok()) {
      need_reopen_ = true;
      refuse(dir_, s);
    }
  }
  delete_keys(keys, "purging foreign entries");
  MutexLock lock(mu_);
  counters_.foreign = 0;
  return static_cast<int64_t>(keys.size() + odd.size());
}

int64_t DiskTier::purge_all() {
  MutexLock wl(write_mu_);
  writable_or_throw();
  detail::DiskDb& db = writer_db();
  int64_t n = 0;
  {
    std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), db.index));
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    if (!it->status().ok()) refuse(dir_, it->status());
  }
  {
    MutexLock lock(mu_);
    for (auto& [k, p] : queued_) {
      p->cancelled = true;
      ++n;
    }
    queued_.clear();
    queued_bytes_ = 0;
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].live) remove_entry_locked(static_cast<policies::EntryId>(i));
    counters_.foreign = 0;
  }
  // Every key is 32 bytes; 33 bytes of 0xff sort after all of them.
  const std::string end(33, '\xff');
  rocksdb::WriteBatch wb;
  wb.DeleteRange(db.records, rocksdb::Slice(), end).PermitUncheckedError();
  wb.DeleteRange(db.index, rocksdb::Slice(), end).PermitUncheckedError();
  const rocksdb::Status s = write_db(&wb, rocksdb::WriteOptions());
  if (!s.ok()) {
    need_reopen_ = true;
    refuse(dir_, s);
  }
  // Reclaim the space now: the blob files are dropped once no SST refers to them.
  for (auto* cf : {db.records, db.index}) db.db->CompactRange(rocksdb::CompactRangeOptions(), cf, nullptr, nullptr).PermitUncheckedError();
  return n;
}

int32_t DiskTier::evict_tenant(TenantId tenant) {
  MutexLock wl(write_mu_);
  std::vector<TierKey> doomed;
  int32_t n = 0;
  {
    MutexLock lock(mu_);
    for (auto q = queued_.begin(); q != queued_.end();) {
      if (q->second->owner == tenant) {
        q->second->cancelled = true;
        queued_bytes_ -= q->second->bytes;
        q = queued_.erase(q);
        ++n;
      } else {
        ++q;
      }
    }
    for (size_t i = 0; i < entries_.size(); ++i) {
      const Entry& e = entries_[i];
      if (!e.live || e.owner != tenant) continue;
      doomed.push_back(e.key);
      remove_entry_locked(static_cast<policies::EntryId>(i));
      ++counters_.evicted;
      ++n;
    }
  }
  delete_keys(doomed, "evicting a tenant");
  return n;
}

// --- Policy and stats ------------------------------------------------------------

void DiskTier::set_policy(std::unique_ptr<policies::EvictionPolicy> next) {
  if (!next) throw std::invalid_argument("DiskTier::set_policy: null policy");
  MutexLock lock(mu_);
  for (policies::EntryId e : policy_->eviction_order()) {
    next->on_insert(e, entry_info(e));
    next->on_release(e);
  }
  policy_ = std::move(next);
}

std::string DiskTier::policy_name() const {
  MutexLock lock(mu_);
  return std::string(policy_->name());
}

policies::PolicyParams DiskTier::policy_params() const {
  MutexLock lock(mu_);
  return policy_->params();
}

TierStats DiskTier::stats() const {
  MutexLock lock(mu_);
  TierStats st = counters_;
  st.capacity_bytes = capacity_bytes_;
  st.used_bytes = used_bytes_;
  st.blocks = static_cast<int64_t>(index_.size());
  st.queued = static_cast<int64_t>(queued_.size());
  st.queued_bytes = static_cast<int64_t>(queued_bytes_);
  st.tenant_blocks.insert(tenant_blocks_.begin(), tenant_blocks_.end());
  return st;
}

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

// --- Offline purge -----------------------------------------------------------------

int64_t purge_disk_tier(const std::string& dir, const KvIdentity* keep) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return 0;
  detail::DiskDb db;
  const rocksdb::Status s = db.open(dir, nullptr);
  if (!s.ok()) refuse(dir, s);
  const uint64_t digest = keep ? identity_digest(*keep) : 0;
  int64_t n = 0;
  rocksdb::WriteBatch wb;
  auto write = [&] {
    const rocksdb::Status w = db.db->Write(rocksdb::WriteOptions(), &wb);
    if (!w.ok()) refuse(dir, w);
    wb.Clear();
  };
  std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), db.index));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (keep) {
      const std::optional<IndexValue> v = decode_index(it->value());
      if (v && v->digest == digest) continue;
    }
    wb.Delete(db.records, it->key()).PermitUncheckedError();
    wb.Delete(db.index, it->key()).PermitUncheckedError();
    if (++n % 1024 == 0) write();
  }
  if (!it->status().ok()) refuse(dir, it->status());
  it.reset();
  if (wb.Count() > 0) write();
  if (n > 0)
    for (auto* cf : {db.records, db.index})
      db.db->CompactRange(rocksdb::CompactRangeOptions(), cf, nullptr, nullptr).PermitUncheckedError();
  return n;
}

}  // namespace kvgate::cache
