// The disk tier's in-memory index and its eviction policy: adding and removing entries, eviction, the memory of failed puts, logging, stats.
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "cache/tiers/disk_tier.h"
#include "cache/tiers/disk_tier_internal.h"

namespace kvgate::cache {
namespace {

constexpr size_t kFailedMemory = 65536;
constexpr auto kLogInterval = std::chrono::seconds(10);

}  // namespace

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

}  // namespace kvgate::cache
