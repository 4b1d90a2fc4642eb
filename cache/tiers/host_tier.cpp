// The host tier's bookkeeping.
//
// Invariants (check_invariants() verifies them; with KVGATE_CHECK_INVARIANTS,
// as in the sanitizer builds, after every mutating call):
//   - free_list_ holds exactly the free slots, each once; a free slot has no
//     lease.
//   - index_ maps exactly the reserved and stored slots' keys to them; a
//     dropping slot is not indexed.
//   - a reserved slot has no lease; a dropping slot has at least one.
//   - the policy's candidates are exactly the stored slots without a lease.
//   - n_stored_ counts the stored slots, n_leased_ the slots with leases;
//     per-tenant stored and reserved counts sum to the slots in those states.
#include "cache/tiers/host_tier.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "policies/eviction/lru_policy.h"

namespace kvgate::cache {
namespace {

[[noreturn]] void broken(const std::string& what) { throw std::logic_error("host tier invariant: " + what); }

int32_t slots_for(int64_t capacity_bytes, size_t record_bytes) {
  if (record_bytes == 0) throw std::invalid_argument("HostTier: invalid KV identity (a record of no bytes)");
  if (capacity_bytes < 0) throw std::invalid_argument("HostTier: negative capacity");
  const int64_t n = capacity_bytes / static_cast<int64_t>(record_bytes);
  return static_cast<int32_t>(std::min<int64_t>(n, std::numeric_limits<int32_t>::max()));
}

}  // namespace

// --- Reservation ---------------------------------------------------------

HostTier::Reservation::Reservation(Reservation&& o) noexcept
    : tier_(std::exchange(o.tier_, nullptr)), slot_(o.slot_), key_(o.key_), owner_(o.owner_) {}

HostTier::Reservation& HostTier::Reservation::operator=(Reservation&& o) noexcept {
  if (this != &o) {
    if (tier_) tier_->abandon(slot_);
    tier_ = std::exchange(o.tier_, nullptr);
    slot_ = o.slot_;
    key_ = o.key_;
    owner_ = o.owner_;
  }
  return *this;
}

HostTier::Reservation::~Reservation() {
  if (tier_) tier_->abandon(slot_);
}

std::span<std::byte> HostTier::Reservation::bytes() const {
  if (!tier_) throw std::logic_error("HostTier::Reservation: already published or abandoned");
  return tier_->slot_bytes(slot_);
}

void HostTier::Reservation::publish() {
  if (!tier_) throw std::logic_error("HostTier::Reservation: already published or abandoned");
  HostTier* t = std::exchange(tier_, nullptr);
  t->publish(slot_);
}

// --- Lease -----------------------------------------------------------------

HostTier::Lease::Lease(Lease&& o) noexcept
    : tier_(std::exchange(o.tier_, nullptr)), slot_(o.slot_), key_(o.key_), owner_(o.owner_) {}

HostTier::Lease& HostTier::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    drop();
    tier_ = std::exchange(o.tier_, nullptr);
    slot_ = o.slot_;
    key_ = o.key_;
    owner_ = o.owner_;
  }
  return *this;
}

HostTier::Lease::~Lease() { drop(); }

void HostTier::Lease::drop() {
  if (HostTier* t = std::exchange(tier_, nullptr)) t->release(slot_);
}

std::span<const std::byte> HostTier::Lease::bytes() const {
  if (!tier_) throw std::logic_error("HostTier::Lease: moved from");
  return tier_->slot_bytes(slot_);
}

// --- HostTier --------------------------------------------------------------

HostTier::HostTier(int64_t capacity_bytes, const KvIdentity& identity,
                   std::unique_ptr<policies::EvictionPolicy> policy)
    : identity_(identity),
      record_bytes_(cache::record_bytes(identity)),
      n_slots_(slots_for(capacity_bytes, record_bytes_)),
      capacity_bytes_(capacity_bytes),
      // Uninitialised on purpose: pages nobody has written cost nothing.
      arena_(new std::byte[static_cast<size_t>(n_slots_) * record_bytes_]),
      policy_(policy ? std::move(policy) : policies::make_lru_policy()),
      slots_(static_cast<size_t>(n_slots_)) {
  free_list_.reserve(slots_.size());
  for (int32_t s = n_slots_ - 1; s >= 0; --s) free_list_.push_back(s);  // slot 0 is handed out first
  index_.reserve(slots_.size());
}

HostTier::~HostTier() = default;

std::span<std::byte> HostTier::slot_bytes(int32_t slot) const {
  return {arena_.get() + static_cast<size_t>(slot) * record_bytes_, record_bytes_};
}

policies::EntryInfo HostTier::entry_info(int32_t slot) const {
  const Slot& s = slots_[static_cast<size_t>(slot)];
  return {s.depth, s.owner, static_cast<int64_t>(record_bytes_), policies::Tier::kHost, s.key.hash.lo};
}

void HostTier::free_locked(int32_t slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  s.state = SlotState::kFree;
  s.leases = 0;
  free_list_.push_back(slot);
}

void HostTier::tell_locked(BlockEventKind kind, const Slot& s, const BlockHash& parent) const {
  if (listener_) listener_->on_block_event({kind, -1, s.key.hash, parent, s.owner, s.depth, policies::Tier::kHost});
}

void HostTier::evict_locked(int32_t slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  tell_locked(BlockEventKind::kRemoved, s);
  policy_->on_remove(slot);
  index_.erase(s.key);
  --n_stored_;
  --tenants_[s.owner].stored;
  ++counters_.evicted;
  s.state = SlotState::kFree;
}

std::optional<int32_t> HostTier::victim_locked() {
  const std::optional<policies::EntryId> v = policy_->victim();
  if (!v) return std::nullopt;
  if (*v < 0 || *v >= n_slots_ || slots_[static_cast<size_t>(*v)].state != SlotState::kStored ||
      slots_[static_cast<size_t>(*v)].leases != 0)
    throw std::logic_error("host tier: eviction policy '" + std::string(policy_->name()) +
                           "' named a victim that is not an unleased stored entry");
  return *v;
}

std::optional<int32_t> HostTier::victim_of_locked(TenantId owner) {
  for (policies::EntryId e : policy_->eviction_order()) {
    const Slot& s = slots_[static_cast<size_t>(e)];
    if (s.owner == owner && s.state == SlotState::kStored && s.leases == 0) return e;
  }
  return std::nullopt;
}

std::optional<HostTier::Reservation> HostTier::reserve(const TierKey& key, TenantId owner, int64_t owner_quota_blocks) {
  MutexLock lock(mu_);
  if (index_.contains(key)) return std::nullopt;
  std::optional<int32_t> slot;
  if (owner_quota_blocks > 0) {
    auto it = tenants_.find(owner);
    int64_t held = it == tenants_.end() ? 0 : it->second.stored + it->second.reserved;
    while (held >= owner_quota_blocks) {
      const std::optional<int32_t> v = victim_of_locked(owner);
      if (!v) {
        ++counters_.refused;
        if (slot) free_locked(*slot);
        debug_check_locked();
        return std::nullopt;
      }
      if (slot) free_locked(*slot);
      evict_locked(*v);
      slot = *v;
      --held;
    }
  }
  if (!slot && !free_list_.empty()) {
    slot = free_list_.back();
    free_list_.pop_back();
  }
  if (!slot) {
    slot = victim_locked();
    if (!slot) {
      ++counters_.refused;
      return std::nullopt;
    }
    evict_locked(*slot);
  }
  Slot& s = slots_[static_cast<size_t>(*slot)];
  s.state = SlotState::kReserved;
  s.leases = 0;
  s.owner = owner;
  s.key = key;
  s.depth = 0;
  index_.emplace(key, *slot);
  ++tenants_[owner].reserved;
  debug_check_locked();
  return Reservation(this, *slot, key, owner);
}

void HostTier::publish(int32_t slot) {
  // The header is read outside the lock: the reservation still owns the slot.
  const std::optional<RecordHeader> h = read_record_header(slot_bytes(slot));
  MutexLock lock(mu_);
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (!h || h->key.hash != s.key.hash || h->key.scope != s.key.scope || h->identity != identity_) {
    index_.erase(s.key);
    --tenants_[s.owner].reserved;
    free_locked(slot);
    debug_check_locked();
    throw std::logic_error("HostTier::Reservation::publish: the slot does not hold a record sealed for its key and this tier's identity");
  }
  s.state = SlotState::kStored;
  s.depth = h->key.depth;
  TenantCount& t = tenants_[s.owner];
  --t.reserved;
  ++t.stored;
  ++n_stored_;
  ++counters_.stored;
  // Depth 0's parent is the chain seed, derived from the secret scope.
  tell_locked(BlockEventKind::kStored, s, h->key.depth == 0 ? BlockHash{} : h->key.parent);
  policy_->on_insert(slot, entry_info(slot));
  policy_->on_release(slot);
  debug_check_locked();
}

void HostTier::abandon(int32_t slot) {
  MutexLock lock(mu_);
  Slot& s = slots_[static_cast<size_t>(slot)];
  index_.erase(s.key);
  --tenants_[s.owner].reserved;
  free_locked(slot);
  debug_check_locked();
}

std::optional<HostTier::Lease> HostTier::acquire(const TierKey& key) {
  MutexLock lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end() || slots_[static_cast<size_t>(it->second)].state != SlotState::kStored) {
    ++counters_.misses;
    return std::nullopt;
  }
  const int32_t slot = it->second;
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (s.leases++ == 0) ++n_leased_;
  policy_->on_hit(slot);
  ++counters_.hits;
  debug_check_locked();
  return Lease(this, slot, key, s.owner);
}

void HostTier::release(int32_t slot) {
  MutexLock lock(mu_);
  Slot& s = slots_[static_cast<size_t>(slot)];
  if (--s.leases > 0) return;
  --n_leased_;
  if (s.state == SlotState::kDropping) {
    policy_->on_remove(slot);
    free_locked(slot);
  } else {
    policy_->on_release(slot);
  }
  debug_check_locked();
}

bool HostTier::contains(const TierKey& key) const {
  MutexLock lock(mu_);
  auto it = index_.find(key);
  return it != index_.end() && slots_[static_cast<size_t>(it->second)].state == SlotState::kStored;
}

void HostTier::drop_corrupt(const TierKey& key, RecordFault why) {
  MutexLock lock(mu_);
  drop_locked(key, -1, why);
}

// A lease is a reader's view of one slot: if its record was dropped already
// (by another reader of the same bad bytes) and a good one stored under the
// key since, that good one is not the lease's to drop.
void HostTier::drop_corrupt(const Lease& lease, RecordFault why) {
  MutexLock lock(mu_);
  drop_locked(lease.key(), lease.slot_, why);
}

void HostTier::drop_locked(const TierKey& key, int32_t only_slot, RecordFault why) {
  auto it = index_.find(key);
  if (it == index_.end() || slots_[static_cast<size_t>(it->second)].state != SlotState::kStored) return;
  if (only_slot >= 0 && it->second != only_slot) return;
  const int32_t slot = it->second;
  Slot& s = slots_[static_cast<size_t>(slot)];
  ++counters_.faults[std::string(fault_name(why))];
  tell_locked(BlockEventKind::kRemoved, s);
  index_.erase(it);
  --n_stored_;
  --tenants_[s.owner].stored;
  if (s.leases == 0) {
    policy_->on_remove(slot);
    free_locked(slot);
  } else {
    s.state = SlotState::kDropping;  // freed by the last release
  }
  debug_check_locked();
}

int32_t HostTier::evict_tenant(TenantId tenant) {
  MutexLock lock(mu_);
  int32_t n = 0;
  for (int32_t slot = 0; slot < n_slots_; ++slot) {
    const Slot& s = slots_[static_cast<size_t>(slot)];
    if (s.owner != tenant || s.state != SlotState::kStored || s.leases != 0) continue;
    evict_locked(slot);
    free_locked(slot);
    ++n;
  }
  debug_check_locked();
  return n;
}

void HostTier::set_policy(std::unique_ptr<policies::EvictionPolicy> next) {
  if (!next) throw std::invalid_argument("HostTier::set_policy: null policy");
  MutexLock lock(mu_);
  // Leased entries first (not candidates; a dropping one only waits for its
  // on_remove), then the candidates in the old policy's order, next victim first.
  for (int32_t slot = 0; slot < n_slots_; ++slot) {
    const Slot& s = slots_[static_cast<size_t>(slot)];
    if ((s.state == SlotState::kStored || s.state == SlotState::kDropping) && s.leases > 0)
      next->on_insert(slot, entry_info(slot));
  }
  for (policies::EntryId e : policy_->eviction_order()) {
    next->on_insert(e, entry_info(e));
    next->on_release(e);
  }
  policy_ = std::move(next);
  debug_check_locked();
}

std::string HostTier::policy_name() const {
  MutexLock lock(mu_);
  return std::string(policy_->name());
}

policies::PolicyParams HostTier::policy_params() const {
  MutexLock lock(mu_);
  return policy_->params();
}

TierStats HostTier::stats() const {
  MutexLock lock(mu_);
  TierStats st = counters_;
  st.capacity_bytes = capacity_bytes_;
  st.blocks = n_stored_;
  st.used_bytes = n_stored_ * static_cast<int64_t>(record_bytes_);
  st.pinned = n_leased_;
  for (const auto& [tenant, c] : tenants_)
    if (c.stored > 0) st.tenant_blocks[tenant] = c.stored;
  return st;
}

bool HostTier::mutate_for_test(const TierKey& key, const std::function<void(std::span<std::byte>)>& f) {
  MutexLock lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  const Slot& s = slots_[static_cast<size_t>(it->second)];
  if (s.state != SlotState::kStored || s.leases != 0) return false;
  f(slot_bytes(it->second));
  return true;
}

void HostTier::check_invariants() const {
  MutexLock lock(mu_);
  check_invariants_locked();
}

void HostTier::debug_check_locked() const {
#ifdef KVGATE_CHECK_INVARIANTS
  check_invariants_locked();
#endif
}

void HostTier::check_invariants_locked() const {
  std::vector<uint8_t> listed(slots_.size(), 0);
  for (int32_t s : free_list_) {
    if (s < 0 || s >= n_slots_) broken("free list holds slot " + std::to_string(s) + ", outside the arena");
    if (listed[static_cast<size_t>(s)]++) broken("slot " + std::to_string(s) + " is on the free list twice");
  }
  int64_t stored = 0, leased = 0, candidates = 0, indexed = 0;
  std::unordered_map<TenantId, TenantCount> per;
  for (int32_t i = 0; i < n_slots_; ++i) {
    const Slot& s = slots_[static_cast<size_t>(i)];
    const std::string who = "slot " + std::to_string(i) + ": ";
    if (s.leases < 0) broken(who + "negative lease count");
    if ((s.state == SlotState::kFree) != static_cast<bool>(listed[static_cast<size_t>(i)]))
      broken(who + (s.state == SlotState::kFree ? "free but not on the free list" : "on the free list but not free"));
    if (s.leases > 0) ++leased;
    const bool should_index = s.state == SlotState::kReserved || s.state == SlotState::kStored;
    if (should_index) {
      ++indexed;
      auto it = index_.find(s.key);
      if (it == index_.end() || it->second != i) broken(who + "not indexed under its key");
    }
    switch (s.state) {
      case SlotState::kFree:
        if (s.leases != 0) broken(who + "free but leased");
        break;
      case SlotState::kReserved:
        if (s.leases != 0) broken(who + "reserved but leased");
        ++per[s.owner].reserved;
        break;
      case SlotState::kStored:
        ++stored;
        ++per[s.owner].stored;
        if (s.leases == 0) ++candidates;
        break;
      case SlotState::kDropping:
        if (s.leases == 0) broken(who + "dropping without a lease");
        break;
    }
  }
  if (static_cast<size_t>(indexed) != index_.size()) broken("the index holds keys of no reserved or stored slot");
  if (stored != n_stored_) broken("stored count " + std::to_string(n_stored_) + " != " + std::to_string(stored));
  if (leased != n_leased_) broken("leased count " + std::to_string(n_leased_) + " != " + std::to_string(leased));
  if (policy_->candidates() != candidates)
    broken("the policy has " + std::to_string(policy_->candidates()) + " candidates, the tier " +
           std::to_string(candidates) + " unleased stored entries");
  for (const auto& [tenant, c] : tenants_) {
    const auto it = per.find(tenant);
    const TenantCount want = it == per.end() ? TenantCount{} : it->second;
    if (c.stored != want.stored || c.reserved != want.reserved) broken("per-tenant counts drifted");
  }
  for (const auto& [tenant, c] : per)
    if (!tenants_.contains(tenant)) broken("a tenant holds slots but has no counters");
}

}  // namespace kvgate::cache
