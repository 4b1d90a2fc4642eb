// DiskTier: the tier below the host, in RocksDB under the data directory.
// Each block is one sealed record (block_record.h), stored as the value of
// its TierKey (tier_key.h: scope, then hash) in the "records" column family,
// whose large values go to blob files (BlobDB). A small "index" column
// family, written in the same WriteBatch as each record, holds what the
// in-memory index needs (identity digest, owner, depth, size, write order),
// so a restart rebuilds the index without reading a single large value.
//
// Writes never make the caller wait on the disk: enqueue() copies a record
// into a bounded queue (refusing, counted, when it is full), and one writer
// thread writes the queue in FIFO order, in batches, with sync=false (the
// WAL is in the OS page cache once Write returns: a kill -9 of the process
// loses nothing acknowledged; a power cut may). After each batch it indexes
// the records (counted persisted) and evicts by the policy while the tier's
// bytes exceed its capacity.
//
// Chains, what is guaranteed: records are written in the order enqueued
// (a head enqueued before its tail is persisted no later than the tail, in
// the same or an earlier batch). A record whose parent's latest put failed
// (refused for a full queue, or in a batch whose write failed) is refused
// itself, at enqueue or when the writer reaches it, and then counts as
// failed for its own children: a failure in the middle of a chain never
// leaves the chain's tail persisted without its head. (The memory of
// failures is bounded to the last 65,536 keys; a head evicted for capacity
// later is not covered: lookups walk from the head, so such a tail is only
// unreachable, never wrong.)
//
// Failures: a failed write (disk full, an I/O error) drops its batch
// (counted in write_errors and refused) and is logged to stderr at most once
// per 10 s with the directory and RocksDB's status; the database is then
// reopened before the next write (reads wait for that). While that fails
// too (the disk is still full) it is open read-only: reads go on, writes are
// refused (counted) and reopening is tried again every retry_interval. The
// tier keeps working.
//
// Thread-safety: every member may be called from any thread, except that
// nothing may run concurrently with the destructor. enqueue, contains and
// stats take only a short lock; get reads RocksDB (blocking: call it from
// a reader thread, never the engine loop); drop_corrupt, evict_tenant,
// purge_*, set_policy and put_raw_for_test wait for a batch being written.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "cache/block_event.h"
#include "cache/tiers/block_record.h"
#include "cache/tiers/block_store.h"
#include "cache/tiers/kv_identity.h"
#include "cache/tiers/tier_key.h"
#include "cache/tiers/tier_stats.h"
#include "policies/eviction/eviction_policy.h"

namespace rocksdb {
class Env;
class Status;
class WriteBatch;
struct WriteOptions;
}  // namespace rocksdb

namespace kvgate::cache {

namespace detail {
struct DiskDb;  // the database and its column families (disk_db.h)
}

struct DiskTierOptions {
  std::string dir;                    // the tier's own directory (created if missing)
  // Of records, as the index counts them. The directory holds more: RocksDB
  // reclaims deleted records' blob files at compaction, and memtables, WAL
  // and blob files not yet compacted add a few hundred MB (about 400 MB
  // past the capacity in a churn test: 2 GB written through a 130 MB tier).
  int64_t capacity_bytes = 0;
  KvIdentity identity;
  std::unique_ptr<policies::EvictionPolicy> policy;   // null = lru
  // A database that will not open (or whose index cannot be read): renamed
  // to <dir>.corrupt-<unix time> and a fresh one made, instead of refusing.
  bool move_aside_corrupt = false;
  // Bytes of records waiting for the writer; past it, enqueue() refuses
  // (counted). A record larger than this is still taken when the queue is empty.
  size_t write_queue_bytes = size_t{64} << 20;
  rocksdb::Env* env = nullptr;        // tests inject faults (null = default); must outlive the tier
  // After a failed write, how often reopening the database is tried; writes
  // in between are refused (counted) and reads use it read-only.
  std::chrono::milliseconds retry_interval{1000};
  // Told every block indexed (stored: those found at open, then each write
  // that lands) and every block that leaves the index (block_event.h),
  // under the tier's lock; must outlive the tier. Null: no one.
  BlockEventListener* listener = nullptr;
};

class DiskTier final : public BlockStore {
 public:
  // Opens or creates the database and rebuilds the in-memory index from the
  // index column family; entries of another identity are ignored (counted as
  // foreign). Throws std::runtime_error naming the directory and RocksDB's
  // status ("kv disk tier at /x/kv: Corruption: ...") for a database that
  // will not open, unless move_aside_corrupt; std::invalid_argument for an
  // invalid identity or an empty dir.
  static std::unique_ptr<DiskTier> open(DiskTierOptions options);
  ~DiskTier() override;  // stops the writer after writing what is queued
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  const KvIdentity& identity() const override { return identity_; }
  const std::string& dir() const { return dir_; }
  // Where a corrupt database was moved at open (move_aside_corrupt), or empty.
  const std::string& moved_aside_to() const { return moved_aside_to_; }

  // Copies a sealed record into the write queue. False when the queue is
  // full, the record's header does not read or is of another identity, or
  // its parent's latest put failed (all refused, counted), or the key is
  // already stored or queued (not counted).
  bool enqueue(std::span<const std::byte> record, TenantId owner) override;

  // A record: from the queue if it is still waiting there, else read from
  // RocksDB (blocking). Nothing when not indexed or the read failed (a miss).
  // A hit is counted and told to the policy (on_hit, then on_release). The
  // caller runs check_record and reports a fault with drop_corrupt.
  std::optional<std::vector<std::byte>> get(const TierKey& key) override;
  // get() of each key with up to kReadsInFlight reads at once: one read at a
  // time leaves the disk idle between requests (about half its sequential
  // speed for 384 KiB records).
  static constexpr size_t kReadsInFlight = 8;
  using BlockStore::get_many;
  std::vector<std::optional<std::vector<std::byte>>> get_many(std::span<const TierKey> keys,
                                                              const OnRead& on_read) override;
  // Stored (indexed) or queued.
  bool contains(const TierKey& key) const override;
  // An entry found corrupt: deleted (or, still queued, never written) and
  // counted under fault_name(why), once; nothing for a key not held.
  void drop_corrupt(const TierKey& key, RecordFault why) override;

  // Waits until everything queued before the call is written or dropped.
  void flush();

  // Deletes every entry of another identity (and any index entry that does
  // not parse); returns how many.
  int64_t purge_foreign();
  // Deletes everything, queued records included; returns how many entries.
  int64_t purge_all();
  // Deletes every entry charged to `tenant` (counted as evicted) and drops
  // its queued records; returns how many.
  int32_t evict_tenant(TenantId tenant);

  // Replaces the policy live, keeping the old one's eviction order.
  void set_policy(std::unique_ptr<policies::EvictionPolicy> policy);
  std::string policy_name() const;
  policies::PolicyParams policy_params() const;
  TierStats stats() const;

  // Tests: writes `value` as the record of `key` (the index entry as if it
  // were a good record of `owner` at `depth`), bypassing sealing and the
  // queue, so that flipped or truncated values can be planted.
  void put_raw_for_test(const TierKey& key, std::span<const std::byte> value, TenantId owner, int32_t depth);

 private:
  struct Pending;
  struct Entry {
    TierKey key;
    TenantId owner = 0;
    int32_t depth = 0;
    int64_t bytes = 0;
    bool live = false;
  };

  explicit DiskTier(DiskTierOptions&& o);
  void open_or_move_aside() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void rebuild_index() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  void writer_loop() ABSL_LOCKS_EXCLUDED(write_mu_, mu_);
  void write_batch(std::vector<std::shared_ptr<Pending>>& batch) ABSL_LOCKS_EXCLUDED(write_mu_, mu_);
  policies::EntryInfo entry_info(policies::EntryId e) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  policies::EntryId add_entry_locked(const TierKey& key, TenantId owner, int32_t depth, int64_t bytes,
                                     const BlockHash& parent = {}) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void remove_entry_locked(policies::EntryId e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The policy's victims while over capacity.
  void evict_over_capacity_locked(std::vector<TierKey>& doomed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool chain_broken_locked(const BlockKey& key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void note_failed_locked(const TierKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void log_throttled(const std::string& what) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void delete_keys(const std::vector<TierKey>& keys, const char* why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Reopens the database if a write failed since; false while it cannot be.
  bool ready_to_write(std::string* why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) ABSL_LOCKS_EXCLUDED(db_mu_);
  void writable_or_throw() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);  // ready_to_write, or std::runtime_error
  rocksdb::Status write_db(rocksdb::WriteBatch* wb, const rocksdb::WriteOptions& wo)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) ABSL_LOCKS_EXCLUDED(db_mu_);
  // *db_ for a holder of write_mu_. Reopening the database takes write_mu_
  // as well as db_mu_, so either one keeps it open: writers hold write_mu_,
  // readers db_mu_ shared. The analysis cannot say "write_mu_ or db_mu_",
  // so db_ is guarded by db_mu_ and this is where write_mu_ stands in for it.
  detail::DiskDb& writer_db() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  const std::string dir_;
  const KvIdentity identity_;
  const uint64_t digest_;
  const int64_t capacity_bytes_;
  const size_t write_queue_bytes_;
  const bool move_aside_corrupt_;
  const std::chrono::milliseconds retry_interval_;
  rocksdb::Env* const env_;
  BlockEventListener* const listener_;
  std::string moved_aside_to_;  // set by open(), before the tier is shared

  // Set once; what it points to is closed and opened again by a reopen.
  const std::unique_ptr<detail::DiskDb> db_ ABSL_PT_GUARDED_BY(db_mu_);

  // write_mu_ serialises every change to the database (the writer's batches,
  // deletes) and reopening it; taken before db_mu_ and mu_, never while
  // holding either.
  Mutex write_mu_ ABSL_ACQUIRED_BEFORE(db_mu_, mu_);
  // After a failed write the database is closed and opened again before the
  // next one (RocksDB 7.8 would otherwise append to the WAL writer that saw
  // the error: an assertion, or every later write failing).
  bool need_reopen_ ABSL_GUARDED_BY(write_mu_) = false;
  std::chrono::steady_clock::time_point next_reopen_ ABSL_GUARDED_BY(write_mu_) {};
  std::string last_reopen_error_ ABSL_GUARDED_BY(write_mu_);
  // Readers (get) hold it shared while they use db_; a reopen holds it
  // exclusive (and write_mu_: writers use db_ through writer_db()).
  SharedMutex db_mu_;

  mutable Mutex mu_;
  CondVar work_cv_, done_cv_;
  std::unique_ptr<policies::EvictionPolicy> policy_ ABSL_GUARDED_BY(mu_);
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::vector<policies::EntryId> free_ids_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<TierKey, policies::EntryId, TierKeyHasher> index_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<TenantId, int64_t> tenant_blocks_ ABSL_GUARDED_BY(mu_);
  int64_t used_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // Write order, stored in the index (rebuild keeps the policy's order roughly).
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  std::deque<std::shared_ptr<Pending>> fifo_ ABSL_GUARDED_BY(mu_);
  // Waiting or being written.
  std::unordered_map<TierKey, std::shared_ptr<Pending>, TierKeyHasher> queued_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t enqueued_seq_ ABSL_GUARDED_BY(mu_) = 0, done_seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::unordered_set<TierKey, TierKeyHasher> failed_ ABSL_GUARDED_BY(mu_);  // keys whose latest put failed
  std::deque<TierKey> failed_order_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  TierStats counters_ ABSL_GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_log_ ABSL_GUARDED_BY(mu_) {};
  bool logged_ ABSL_GUARDED_BY(mu_) = false;
  int64_t unlogged_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread writer_;
};

// Offline, for `kvgate cache purge`: opens `dir` and deletes the entries
// whose identity differs from `keep` (every entry when keep is null);
// returns how many. 0 for a directory that does not exist. Throws like
// DiskTier::open (a running server holds the database's lock: refused).
int64_t purge_disk_tier(const std::string& dir, const KvIdentity* keep);

}  // namespace kvgate::cache
