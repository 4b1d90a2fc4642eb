// TierMover: moves KV blocks between the device pool and the tiers below it
// (host memory, then RocksDB), on threads of its own, so that the engine
// loop never waits on a copy down or on a disk read.
//
// Down (write-through, as SGLang's HiCache write_through and LMCache's store
// on compute): a block committed to the device index is handed to offload();
// the mover's writer copies it out of the device into a host record (header,
// token ids, checksums: block_record.h) and queues the same bytes for the
// disk tier's writer. Evicting a device block then costs nothing: its bytes
// are already below, and a preempted sequence's committed blocks are too.
// The caller holds a device reference on the block for the copy (the pool
// never reuses a referenced block), and drops it when collect() hands the
// block back. Blocks are copied in the order given, so a chain's head
// reaches the disk writer's FIFO before its tail.
//
// Up: prefetch() is called when a request is queued, with the part of its
// chain the device does not hold. The reader walks it below the device: a
// block in the host tier is leased there (pinned: it stays put); one only on
// disk is read, verified, copied up into the host tier, and kept in memory
// for the request; the walk stops at the first miss or bad record. The
// engine, admitting the request, take()s what was found and copies it into
// device blocks (restore(), on every core), verifying each host record
// again (check_record) in the same pass as its copy: a host record lives in
// the shared arena, a disk read in the request's own buffer, checked when
// read. Any fault is a miss: the entry is dropped and counted,
// and the request prefills from there.
//
// Thread ownership: offload/collect/prefetch/take/forget/wait_* are called
// by the engine loop only. The tiers are thread-safe; the mover's threads
// read device blocks through the BlockCopier only for blocks the caller
// holds a reference on (immutable while cached).
#pragma once

#include <chrono>
#include <exception>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "base/mutex.h"
#include "cache/block_copier.h"
#include "cache/block_pool.h"
#include "cache/tiers/block_record.h"
#include "cache/tiers/block_store.h"
#include "cache/tiers/host_tier.h"
#include "cache/tiers/kv_identity.h"
#include "policies/ids.h"

namespace kvgate::cache {

// The tiers below the device, either of which may be absent.
struct LowerTiers {
  std::shared_ptr<HostTier> host;
  std::shared_ptr<BlockStore> disk;  // the RocksDB tier (disk_tier.h)
  explicit operator bool() const { return host || disk; }
};

// One block found below the device for a request: its record, leased in the
// host tier or held in memory after a disk read, and the tier it came from.
class FoundBlock {
 public:
  FoundBlock(HostTier::Lease lease) : held_(std::move(lease)), tier_(policies::Tier::kHost) {}
  FoundBlock(std::vector<std::byte> record) : held_(std::move(record)), tier_(policies::Tier::kDisk) {}
  policies::Tier tier() const { return tier_; }
  std::span<const std::byte> record() const;
  // The host tier's lease, when the record is read there; null after a disk read.
  const HostTier::Lease* lease() const { return std::get_if<HostTier::Lease>(&held_); }

 private:
  std::variant<HostTier::Lease, std::vector<std::byte>> held_;
  policies::Tier tier_;
};

// What the mover has done, for metrics.
struct MoverStats {
  int64_t offloaded = 0;       // device blocks copied down into a tier
  int64_t offload_skipped = 0; // not copied: already below, or no room (every host slot leased)
  int64_t prefetches = 0;      // chains looked up below the device
  int64_t disk_reads = 0;      // records read from RocksDB for a prefetch
  int64_t errors = 0;          // copies or lookups that threw (logged at most once a minute)
};

class TierMover {
 public:
  TierMover(LowerTiers tiers, BlockCopier& copier, KvIdentity identity);
  ~TierMover();  // finishes the copies under way; drops what waits
  TierMover(const TierMover&) = delete;
  TierMover& operator=(const TierMover&) = delete;

  const LowerTiers& tiers() const { return tiers_; }
  const KvIdentity& identity() const { return identity_; }

  // --- Down ---------------------------------------------------------------
  // Queues device block `b` (cached under `key`, holding `tokens`, charged
  // to `owner`, whose per-tier quota is `quota_blocks`, 0 = none) to be
  // copied down. The caller holds a reference on `b` until collect() returns it.
  void offload(BlockId b, const BlockKey& key, TenantId owner, int64_t quota_blocks, std::span<const TokenId> tokens);
  // Appends the blocks whose copy has finished since the last call.
  void collect(std::vector<BlockId>& done);
  // Blocks handed to offload() and not yet collected.
  int32_t offloads_in_flight() const;
  // Waits until every queued copy has finished (the engine has nothing else
  // to do; a copy down is a memcpy, never a disk write).
  void wait_offloads();

  // --- Up -----------------------------------------------------------------
  // Starts looking up `chain[from, end)` (chain[i] links tokens[iB, (i+1)B),
  // chained from `seed`) below the device for request `id`.
  void prefetch(RequestId id, const ScopeId& scope, const BlockHash& seed, std::span<const BlockHash> chain,
                std::span<const TokenId> tokens, int32_t from);
  bool prefetch_pending(RequestId id) const;
  // Waits up to `timeout_ms` for `id`'s prefetch; true when it is done.
  bool wait_prefetch(RequestId id, int timeout_ms);
  // The blocks found for `id`: chain indices [from, from + size()), in order.
  // Nothing (from = 0) when there was no prefetch or it is still running.
  struct Found {
    int32_t from = 0;
    std::vector<FoundBlock> blocks;
  };
  Found take(RequestId id);
  // The request ended or was restarted: what was found for it is let go.
  void forget(RequestId id);

  // Looks one block up in the host tier now (no disk read): for the blocks
  // a request lost from the device after its prefetch.
  std::optional<FoundBlock> find_in_host(const TierKey& key);
  // Checks a found record against what the request expects; a fault drops
  // the entry from its tier (counted there) and is returned. A host record
  // is checked again (it lives in the shared arena) and dropped through its
  // lease, so a reader holding stale bad bytes never drops the good record
  // written since; a disk read was checked in full when it was read, into
  // the request's own buffer, and is not checked twice.
  RecordFault verify(const FoundBlock& f, const BlockKey& want, std::span<const TokenId> tokens);

  // One block to bring up at admission: a found record, the key and tokens
  // it must hold, and the device block allocated for it.
  struct Restore {
    const FoundBlock* found;
    BlockKey want;
    std::span<const TokenId> tokens;
    BlockId block;
  };
  // verify()s each record and copies a good one's payload into its device
  // block (a bad one's block is not written); returns each one's fault,
  // kNone when copied. Called by the engine loop; the blocks are spread over
  // its OpenMP team, each record checked and copied by one thread, so the
  // copy reads the bytes its check has just brought into that core's cache:
  // one pass over memory per record, on every core. A copy that throws is
  // rethrown once all have ended.
  std::vector<RecordFault> restore(std::span<const Restore> blocks);

  MoverStats stats() const;

  // Blocks of a chain asked of the disk tier in one get_many, which keeps
  // several reads in flight: a whole prompt's run at once for any common
  // length, so that the disk never waits on the walk between groups.
  static constexpr size_t kReadAhead = 64;

 private:
  struct Offload {
    BlockId block;
    BlockKey key;
    TenantId owner;
    int64_t quota;
    std::vector<TokenId> tokens;
  };
  struct Prefetch {
    RequestId id;
    ScopeId scope;
    BlockHash seed;
    std::vector<BlockHash> chain;
    std::vector<TokenId> tokens;
    int32_t from;
  };
  struct PrefetchResult {
    bool done = false;
    Found found;
  };

  void writer_loop() ABSL_LOCKS_EXCLUDED(mu_);
  void reader_loop() ABSL_LOCKS_EXCLUDED(mu_);
  void copy_down(const Offload& job, std::vector<std::byte>& scratch) ABSL_LOCKS_EXCLUDED(mu_);
  Found look_below(const Prefetch& p) ABSL_LOCKS_EXCLUDED(mu_);
  void note_error(const char* what, const std::exception& e) ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<FoundBlock> accept_from_disk(const TierKey& key, const BlockKey& want, std::span<const TokenId> tokens,
                                            std::optional<std::vector<std::byte>> record);
  bool prefetch_pending_locked(RequestId id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);


  const LowerTiers tiers_;
  BlockCopier& copier_;
  const KvIdentity identity_;

  mutable Mutex mu_;
  CondVar work_, idle_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Offload> offloads_ ABSL_GUARDED_BY(mu_);
  int32_t copying_ ABSL_GUARDED_BY(mu_) = 0;  // taken off offloads_ by the writer, not yet done
  std::vector<BlockId> done_ ABSL_GUARDED_BY(mu_);
  int32_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;  // offloaded and not yet collected
  std::deque<Prefetch> prefetches_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<RequestId, PrefetchResult> results_ ABSL_GUARDED_BY(mu_);  // pending and done, by request
  MoverStats stats_ ABSL_GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_error_log_ ABSL_GUARDED_BY(mu_) {};

  std::thread writer_, reader_;
};

}  // namespace kvgate::cache
