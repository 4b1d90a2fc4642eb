// TierExchange: the scheduler's half of the block traffic between the
// device pool and the KV tiers below it (host memory, then disk), which a
// TierMover (cache/tiers/tier_mover.h) carries on threads of its own.
//
// It is apart from the Scheduler because that traffic has bookkeeping of
// its own that batching and admission need not see: the pool references
// held for copies under way, the walk that matches what was found below
// against a request's chain at its admission, and where each admission's
// cached tokens came from.
//
// Down (write-through): the scheduler hands over every block it commits
// (offload()); the block stays referenced until its copy is done and
// collect(), at the start of every step, takes it back, so it cannot be
// evicted and overwritten while it is read.
// Up: a queued request's chain beyond the device's hits is looked up below
// (prefetch()); at its admission restore() copies what was found into
// fresh device blocks and commits them, so that the rest of admission sees
// ordinary cached blocks, and count_tiers() splits its cached tokens by
// the tier they came from.
//
// Until attach() (no lower tiers, or the prefix cache off) every call does
// nothing and finds nothing, so that the scheduler calls it without asking.
//
// Thread ownership: the scheduler's driving thread, like the pool it shares
// with the scheduler; the mover's own threads stay behind its interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cache/block_copier.h"
#include "cache/block_pool.h"
#include "cache/ids.h"
#include "cache/tiers/kv_identity.h"
#include "cache/tiers/tier_mover.h"
#include "policies/eviction/eviction_policy.h"
#include "policies/ids.h"

namespace kvgate {

struct Sequence;

// What the tiers below the device gave back, counted on the driving thread.
struct RestoreCounters {
  int64_t blocks_from_host = 0, blocks_from_disk = 0;
  int64_t bytes_from_host = 0, bytes_from_disk = 0;
  int64_t faults = 0;  // records that failed verification at restore (dropped, counted by their tier too)
  // Preempted sequences, when re-admitted: positions restored vs recomputed.
  int64_t resumed = 0, resumed_restored_tokens = 0, resumed_recomputed_tokens = 0;
};

class TierExchange {
 public:
  // `pool` and `copier` (the device's blocks and how to copy them) must
  // outlive it.
  TierExchange(cache::BlockPool& pool, cache::BlockCopier& copier);
  ~TierExchange();  // finishes the copies under way (the mover's destructor)
  TierExchange(const TierExchange&) = delete;
  TierExchange& operator=(const TierExchange&) = delete;

  // Starts moving blocks to and from `tiers`, each of which must have been
  // opened with `identity` (the backend's: tier_identity.h); throws
  // kvgate::Error for one opened with another. Called once, if at all.
  void attach(const cache::LowerTiers& tiers, const cache::KvIdentity& identity);
  bool attached() const { return mover_ != nullptr; }

  // Null until attach().
  const cache::TierMover* mover() const { return mover_.get(); }
  const RestoreCounters& restores() const { return restores_; }
  // Per device block, the references copies under way hold on it (empty
  // until attach()): the scheduler's invariants count them.
  std::span<const int32_t> offload_refs() const { return offload_refs_; }

  // --- Down ---------------------------------------------------------------
  // Block `i` of `s`'s table was just committed under `key`: copy it down.
  void offload(const Sequence& s, size_t i, const cache::BlockKey& key);
  // Takes back the blocks whose copy down has finished.
  void collect();
  // Waits for every copy down under way and takes its blocks back.
  void settle();

  // --- Up -----------------------------------------------------------------
  // Starts looking up `s`'s chain past its first `device_hits` blocks below
  // the device.
  void prefetch(const Sequence& s, int32_t device_hits);
  bool prefetch_pending(RequestId id) const;
  // What was found for `id` is let go (it ended).
  void forget(RequestId id);
  // A step ran nothing while `head`, the next request to admit, waits:
  // waits a little for what it waits on below the device.
  void wait_for(RequestId head);

  struct Restored {  // blocks restored at one admission, in chain order after the device's hits
    std::vector<policies::Tier> tiers;
  };
  // Extends `hits` (the device's, referenced) with the blocks found below
  // it, restored into device blocks and committed, leaving `keep_free`
  // blocks free for the admission itself.
  Restored restore(const Sequence& s, std::vector<BlockId>& hits, int32_t keep_free);
  // Splits `s`'s `cached` positions, over `n_hits` blocks of which `r` came
  // from below, into its result's per-tier counts (first admission) or its
  // restored count (`resumed` after a preemption).
  void count_tiers(Sequence& s, const Restored& r, int32_t cached, int32_t n_hits, bool resumed);
  // A preempted sequence was re-admitted, `recomputed` of its lost
  // positions to be computed again (counted with or without tiers).
  void count_resumed(int32_t recomputed);

 private:
  cache::BlockPool& pool_;
  cache::BlockCopier& copier_;
  const int32_t block_size_;
  std::unique_ptr<cache::TierMover> mover_;
  std::vector<int32_t> offload_refs_;  // per block: references the mover holds (copies under way)
  RestoreCounters restores_;
};

}  // namespace kvgate
