// The mover's two threads: the writer copies committed device blocks down,
// the reader looks queued requests' chains up. Each takes its queue under
// mu_ and works outside it.
#include "cache/tiers/tier_mover.h"

#include <chrono>
#include <cstdio>
#include <exception>

namespace kvgate::cache {

std::span<const std::byte> FoundBlock::record() const {
  if (const auto* lease = std::get_if<HostTier::Lease>(&held_)) return lease->bytes();
  return std::get<std::vector<std::byte>>(held_);
}

TierMover::TierMover(LowerTiers tiers, BlockCopier& copier, KvIdentity identity)
    : tiers_(std::move(tiers)), copier_(copier), identity_(identity) {
  if (copier_.block_bytes() != static_cast<size_t>(identity_.payload_bytes()))
    throw std::invalid_argument("TierMover: the device's blocks are " + std::to_string(copier_.block_bytes()) +
                                " bytes, the tiers' identity says " + std::to_string(identity_.payload_bytes()));
  writer_ = std::thread([this] { writer_loop(); });
  reader_ = std::thread([this] { reader_loop(); });
}

TierMover::~TierMover() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  writer_.join();
  reader_.join();
}

// --- Down -------------------------------------------------------------------

void TierMover::offload(BlockId b, const BlockKey& key, TenantId owner, int64_t quota_blocks,
                        std::span<const TokenId> tokens) {
  {
    MutexLock lock(mu_);
    offloads_.push_back({b, key, owner, quota_blocks, {tokens.begin(), tokens.end()}});
    ++in_flight_;
  }
  work_.notify_all();
}

void TierMover::collect(std::vector<BlockId>& done) {
  MutexLock lock(mu_);
  done.insert(done.end(), done_.begin(), done_.end());
  in_flight_ -= static_cast<int32_t>(done_.size());
  done_.clear();
}

int32_t TierMover::offloads_in_flight() const {
  MutexLock lock(mu_);
  return in_flight_;
}

void TierMover::wait_offloads() {
  MutexLock lock(mu_);
  while (!offloads_.empty() || copying_ != 0) idle_.wait(mu_);
}

void TierMover::writer_loop() {
  std::vector<std::byte> scratch;  // the record when there is no host tier
  MutexLock lock(mu_);
  for (;;) {
    while (!stopping_ && offloads_.empty()) work_.wait(mu_);
    if (stopping_) return;
    Offload job = std::move(offloads_.front());
    offloads_.pop_front();
    ++copying_;
    {
      MutexUnlock unlocked(mu_);
      try {
        copy_down(job, scratch);
      } catch (const std::exception& e) {  // a copy that failed is a block not offloaded, never a dead thread
        note_error("copying a block down", e);
      }
    }
    --copying_;
    done_.push_back(job.block);
    if (offloads_.empty() && copying_ == 0) idle_.notify_all();
  }
}

// The block's bytes go straight from the device into the record's payload
// (a host slot, reserved so nobody reads or evicts it half written), the
// header is sealed over them, and the disk tier's writer gets a copy.
void TierMover::copy_down(const Offload& job, std::vector<std::byte>& scratch) {
  const TierKey key{job.key.scope, job.key.hash};
  bool copied = false;
  if (tiers_.host) {
    if (std::optional<HostTier::Reservation> r = tiers_.host->reserve(key, job.owner, job.quota)) {
      copier_.to_host(job.block, record_payload(r->bytes(), identity_));
      seal_record(r->bytes(), job.key, job.owner, identity_, job.tokens);
      if (tiers_.disk && !tiers_.disk->contains(key)) tiers_.disk->enqueue(r->bytes(), job.owner);
      r->publish();
      copied = true;
    }
  } else if (tiers_.disk && !tiers_.disk->contains(key)) {
    scratch.resize(record_bytes(identity_));
    copier_.to_host(job.block, record_payload(std::span(scratch), identity_));
    seal_record(scratch, job.key, job.owner, identity_, job.tokens);
    copied = tiers_.disk->enqueue(scratch, job.owner);
  }
  MutexLock lock(mu_);
  ++(copied ? stats_.offloaded : stats_.offload_skipped);
}

// --- Up ---------------------------------------------------------------------

void TierMover::prefetch(RequestId id, const ScopeId& scope, const BlockHash& seed, std::span<const BlockHash> chain,
                         std::span<const TokenId> tokens, int32_t from) {
  if (from >= static_cast<int32_t>(chain.size())) return;
  {
    MutexLock lock(mu_);
    results_[id] = {};  // a new lookup replaces an old one's result
    prefetches_.push_back({id, scope, seed, {chain.begin(), chain.end()}, {tokens.begin(), tokens.end()}, from});
    ++stats_.prefetches;
  }
  work_.notify_all();
}

bool TierMover::prefetch_pending(RequestId id) const {
  MutexLock lock(mu_);
  return prefetch_pending_locked(id);
}

bool TierMover::prefetch_pending_locked(RequestId id) const {
  const auto it = results_.find(id);
  return it != results_.end() && !it->second.done;
}

bool TierMover::wait_prefetch(RequestId id, int timeout_ms) {
  MutexLock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (prefetch_pending_locked(id))
    if (!idle_.wait_until(mu_, deadline)) return !prefetch_pending_locked(id);
  return true;
}

TierMover::Found TierMover::take(RequestId id) {
  MutexLock lock(mu_);
  const auto it = results_.find(id);
  if (it == results_.end() || !it->second.done) return {};
  Found f = std::move(it->second.found);
  results_.erase(it);
  return f;
}

void TierMover::forget(RequestId id) {
  Found dropped;  // its leases end outside the lock
  MutexLock lock(mu_);
  const auto it = results_.find(id);
  if (it == results_.end()) return;
  dropped = std::move(it->second.found);
  results_.erase(it);
}

void TierMover::reader_loop() {
  MutexLock lock(mu_);
  for (;;) {
    while (!stopping_ && prefetches_.empty()) work_.wait(mu_);
    if (stopping_) return;
    Prefetch p = std::move(prefetches_.front());
    prefetches_.pop_front();
    Found found;
    {
      MutexUnlock unlocked(mu_);
      try {
        found = look_below(p);
      } catch (const std::exception& e) {  // what was not found is prefilled
        note_error("looking a chain up below the device", e);
      }
    }
    // Forgotten (or asked again) meanwhile: this result is nobody's.
    if (auto it = results_.find(p.id); it != results_.end() && !it->second.done) {
      it->second.found = std::move(found);
      it->second.done = true;
    } else {
      MutexUnlock unlocked(mu_);  // its leases end outside the lock
      found = {};
    }
    idle_.notify_all();
  }
}

// Host hits are leased one by one; a run of blocks found only on disk is
// read together (several reads in flight), each record verified on the
// thread that read it, right after the read (its bytes still in that core's
// cache). The walk stops at the first block found nowhere or failing.
TierMover::Found TierMover::look_below(const Prefetch& p) {
  Found f;
  f.from = p.from;
  const size_t B = static_cast<size_t>(identity_.block_size);
  const size_t n = std::min(p.chain.size(), p.tokens.size() / B);
  const auto want = [&](size_t i) { return chain_key(p.chain, p.seed, p.scope, i); };
  const auto tokens = [&](size_t i) { return std::span(p.tokens).subspan(i * B, B); };
  for (size_t i = static_cast<size_t>(p.from); i < n;) {
    if (std::optional<FoundBlock> b = find_in_host({p.scope, p.chain[i]})) {
      f.blocks.push_back(std::move(*b));
      ++i;
      continue;
    }
    std::vector<TierKey> run;
    while (tiers_.disk && i + run.size() < n && run.size() < kReadAhead) {
      const TierKey k{p.scope, p.chain[i + run.size()]};
      if (!tiers_.disk->contains(k) || (tiers_.host && tiers_.host->contains(k))) break;
      run.push_back(k);
    }
    if (run.empty()) break;
    // Every record read is verified (a bad one dropped and counted, a good
    // one copied up), but the chain stops at the first that is missing or bad.
    std::vector<std::optional<FoundBlock>> accepted(run.size());
    tiers_.disk->get_many(run, [&](size_t k, std::optional<std::vector<std::byte>>& rec) {
      try {
        accepted[k] = accept_from_disk(run[k], want(i + k), tokens(i + k), std::move(rec));
      } catch (const std::exception& e) {  // a host tier that throws: this block is a miss
        note_error("verifying a disk record", e);
      }
    });
    {
      MutexLock lock(mu_);
      stats_.disk_reads += static_cast<int64_t>(run.size());
    }
    bool broken = false;
    for (std::optional<FoundBlock>& b : accepted) {
      if (!b) broken = true;
      if (!broken) f.blocks.push_back(std::move(*b));
    }
    if (broken) return f;
    i += run.size();
  }
  return f;
}

std::optional<FoundBlock> TierMover::find_in_host(const TierKey& key) {
  if (!tiers_.host) return std::nullopt;
  std::optional<HostTier::Lease> lease = tiers_.host->acquire(key);
  if (!lease) return std::nullopt;
  return FoundBlock(std::move(*lease));
}

// A disk record is verified before it is copied up, so the host tier never
// holds a bad one; the copy kept for the request is not checked again.
std::optional<FoundBlock> TierMover::accept_from_disk(const TierKey& key, const BlockKey& want,
                                                      std::span<const TokenId> tokens,
                                                      std::optional<std::vector<std::byte>> rec) {
  if (!rec) return std::nullopt;
  if (const RecordFault why = check_record(*rec, want, tokens, identity_); why != RecordFault::kNone) {
    tiers_.disk->drop_corrupt(key, why);
    return std::nullopt;
  }
  if (tiers_.host) {
    const std::optional<RecordHeader> h = read_record_header(*rec);
    if (std::optional<HostTier::Reservation> r = tiers_.host->reserve(key, h ? h->owner : 0)) {
      std::copy(rec->begin(), rec->end(), r->bytes().begin());
      r->publish();
    }
  }
  return FoundBlock(std::move(*rec));
}

RecordFault TierMover::verify(const FoundBlock& f, const BlockKey& want, std::span<const TokenId> tokens) {
  // A disk read was verified in full against the same key and tokens when
  // it was read (accept_from_disk), into memory no one else can reach.
  if (!f.lease()) return RecordFault::kNone;
  const RecordFault why = check_record(f.record(), want, tokens, identity_);
  if (why == RecordFault::kNone) return why;
  if (tiers_.host) tiers_.host->drop_corrupt(*f.lease(), why);
  return why;
}

std::vector<RecordFault> TierMover::restore(std::span<const Restore> blocks) {
  const auto n = static_cast<int64_t>(blocks.size());
  std::vector<RecordFault> faults(blocks.size(), RecordFault::kNone);
  std::exception_ptr failed;  // an exception must not leave an OpenMP region
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
  for (int64_t i = 0; i < n; ++i) {
    const Restore& r = blocks[static_cast<size_t>(i)];
    faults[static_cast<size_t>(i)] = verify(*r.found, r.want, r.tokens);
    if (faults[static_cast<size_t>(i)] != RecordFault::kNone) continue;
    try {
      copier_.from_host(r.block, record_payload(r.found->record(), identity_));
    } catch (...) {
#pragma omp critical(kvgate_tier_restore)
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  return faults;
}

// Logged at most once a minute (a failing disk would otherwise flood the
// log); every one is counted.
void TierMover::note_error(const char* what, const std::exception& e) {
  MutexLock lock(mu_);
  ++stats_.errors;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_error_log_ < std::chrono::minutes(1) && stats_.errors > 1) return;
  last_error_log_ = now;
  std::fprintf(stderr, "kvgate: kv tiers: %s failed: %s (%lld errors so far)\n", what, e.what(),
               static_cast<long long>(stats_.errors));
}

MoverStats TierMover::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

}  // namespace kvgate::cache
