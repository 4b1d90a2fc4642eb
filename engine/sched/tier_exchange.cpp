// The scheduler's block traffic with the tiers below the device
// (tier_exchange.h).
//
// Thread ownership: the scheduler's driving thread.
#include "engine/sched/tier_exchange.h"

#include <algorithm>
#include <utility>

#include "base/error.h"
#include "engine/sched/cache_quota.h"
#include "engine/sched/sequence.h"

namespace kvgate {

TierExchange::TierExchange(cache::BlockPool& pool, cache::BlockCopier& copier)
    : pool_(pool), copier_(copier), block_size_(pool.block_size()) {}

TierExchange::~TierExchange() = default;

void TierExchange::attach(const cache::LowerTiers& tiers, const cache::KvIdentity& identity) {
  for (const cache::KvIdentity* t : {tiers.host ? &tiers.host->identity() : nullptr,
                                     tiers.disk ? &tiers.disk->identity() : nullptr})
    if (t && !(*t == identity)) throw Error("the KV tiers were opened for another model or KV layout than the backend's");
  mover_ = std::make_unique<cache::TierMover>(tiers, copier_, identity);
  offload_refs_.assign(static_cast<size_t>(pool_.num_blocks()), 0);
}

// --- Down --------------------------------------------------------------------

// A newly committed block is copied down at once (write-through); the mover
// holds a reference until the copy is done, so the block cannot be evicted
// and overwritten under it.
void TierExchange::offload(const Sequence& s, size_t i, const cache::BlockKey& key) {
  if (!mover_) return;
  const BlockId b = s.table[i];
  pool_.retain(b);
  ++offload_refs_[static_cast<size_t>(b)];
  const auto B = static_cast<size_t>(block_size_);
  mover_->offload(b, key, s.who.tenant, s.who.cache_quota_blocks, std::span<const TokenId>(s.tokens).subspan(i * B, B));
}

void TierExchange::collect() {
  if (!mover_) return;
  std::vector<BlockId> done;
  mover_->collect(done);
  for (BlockId b : done) --offload_refs_[static_cast<size_t>(b)];
  pool_.release(done);
}

void TierExchange::settle() {
  if (!mover_) return;
  mover_->wait_offloads();
  collect();
}

// --- Up ----------------------------------------------------------------------

void TierExchange::prefetch(const Sequence& s, int32_t device_hits) {
  if (mover_) mover_->prefetch(s.id, s.scope(), s.seed, s.chain, s.tokens, device_hits);
}

bool TierExchange::prefetch_pending(RequestId id) const { return mover_ && mover_->prefetch_pending(id); }

void TierExchange::forget(RequestId id) {
  if (mover_) mover_->forget(id);
}

// Copies down first: the device blocks they hold may be the room the
// head's admission lacks. Then its prefetch, at most 20 ms, so that the
// engine loop still gets back to its inbox (new requests, cancels).
void TierExchange::wait_for(RequestId head) {
  if (!mover_) return;
  if (mover_->offloads_in_flight() > 0) settle();
  mover_->wait_prefetch(head, 20);
}

// Each record found is verified, copied into a fresh device block and
// committed there. Stops at the first block not found or failing
// verification (the rest is prefilled).
TierExchange::Restored TierExchange::restore(const Sequence& s, std::vector<BlockId>& hits, int32_t keep_free) {
  Restored r;
  if (!mover_) return r;
  cache::TierMover::Found found = mover_->take(s.id);
  const auto B = static_cast<size_t>(block_size_);
  const size_t full = std::min(s.chain.size(), s.tokens.size() / B);
  // The run of blocks found below the device's hits, each with a device
  // block to go into, while the pool and the tenant's cache quota have room.
  std::vector<cache::FoundBlock> looked_up;  // lost from the device since the prefetch: found now
  looked_up.reserve(full - std::min(full, hits.size()));
  std::vector<cache::TierMover::Restore> run;
  for (size_t i = hits.size(); i < full; ++i) {
    const auto f = static_cast<size_t>(found.from);
    const cache::FoundBlock* fb = nullptr;
    if (i >= f && i - f < found.blocks.size()) {
      fb = &found.blocks[i - f];
    } else if (std::optional<cache::FoundBlock> now = mover_->find_in_host({s.scope(), s.chain[i]})) {
      fb = &looked_up.emplace_back(std::move(*now));
    } else {
      break;
    }
    if (pool_.available() <= keep_free || !room_in_cache_quota(pool_, s.who, static_cast<int64_t>(run.size()))) break;
    const std::optional<BlockId> b = pool_.allocate(s.who.tenant);
    if (!b) break;
    const cache::BlockKey key = cache::chain_key(s.chain, s.seed, s.scope(), i);
    run.push_back({fb, key, std::span<const TokenId>(s.tokens).subspan(i * B, B), *b});
  }
  std::vector<cache::RecordFault> faults;
  try {
    faults = mover_->restore(run);
  } catch (...) {  // a backend's copy failed: the blocks go back before the error does
    for (size_t i = run.size(); i-- > 0;) pool_.release({&run[i].block, 1});
    throw;
  }
  // The chain continues up to its first bad record; the blocks copied after
  // it go back unused (each bad record was dropped from its tier).
  size_t good = 0;
  for (; good < run.size() && faults[good] == cache::RecordFault::kNone; ++good) {
    const cache::TierMover::Restore& b = run[good];
    if (!pool_.commit(b.block, b.want, b.tokens)) break;  // cannot happen: the device lookup stopped before it
    hits.push_back(b.block);
    r.tiers.push_back(b.found->tier());
    const bool host = b.found->tier() == policies::Tier::kHost;
    ++(host ? restores_.blocks_from_host : restores_.blocks_from_disk);
    (host ? restores_.bytes_from_host : restores_.bytes_from_disk) += static_cast<int64_t>(copier_.block_bytes());
  }
  for (size_t i = run.size(); i-- > good;) {
    if (faults[i] != cache::RecordFault::kNone) ++restores_.faults;
    pool_.release({&run[i].block, 1});
  }
  return r;
}

// The device's hits come first in the chain, then the restored blocks in
// order (a whole-prompt hit recomputes its last position, taken from the
// last block's tier).
void TierExchange::count_tiers(Sequence& s, const Restored& r, int32_t cached, int32_t n_hits, bool resumed) {
  if (!mover_) return;
  const int32_t n_device = n_hits - static_cast<int32_t>(r.tiers.size());
  const int32_t device = std::min(cached, n_device * block_size_);
  int32_t left = cached - device;
  int32_t host = 0, disk = 0;
  for (policies::Tier t : r.tiers) {
    const int32_t n = std::min(left, block_size_);
    (t == policies::Tier::kHost ? host : disk) += n;
    left -= n;
  }
  if (!resumed) {
    s.result.cached_device_tokens = device;
    s.result.cached_host_tokens = host;
    s.result.cached_disk_tokens = disk;
  } else {
    s.result.resumed_restored_tokens += host + disk;
    restores_.resumed_restored_tokens += host + disk;
  }
}

void TierExchange::count_resumed(int32_t recomputed) {
  ++restores_.resumed;
  restores_.resumed_recomputed_tokens += recomputed;
}

}  // namespace kvgate
