// HostTier: the tier below the device, in host memory. A fixed arena of
// record-sized slots (capacity_bytes / record_bytes of them), an index
// TierKey -> slot, and its own eviction policy (EntryId = slot).
//
// Every slot holds one sealed record (block_record.h): the mover copies a
// block's K/V into a reserved slot, seals it and publishes it; a restore
// leases the entry, runs check_record on the bytes and copies the payload up.
//
// Slot states:
//   free        on the free list; nobody reads or writes it.
//   reserved    a Reservation owns it and is filling it; indexed under its
//               key (so a second reserve of the key is refused) but not
//               found by acquire(), not known to the policy, never a victim.
//   stored      published: found by acquire(); the policy knows it and it
//               is a candidate exactly while no lease holds it.
//   dropping    found corrupt while leased: out of the index (a new reserve
//               of the key may proceed in another slot), freed when its last
//               lease drops.
// A leased or reserved slot is never evicted, whatever the policy says.
//
// Thread-safety: every member may be called from any thread; one mutex
// guards the bookkeeping and the policy. The bytes of a slot are written
// without the lock by its Reservation only (it owns the slot) and are
// immutable while stored, so a Lease reads them without the lock.
// Reservations and Leases must not outlive the tier.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "cache/block_event.h"
#include "cache/tiers/block_record.h"
#include "cache/tiers/kv_identity.h"
#include "cache/tiers/tier_key.h"
#include "cache/tiers/tier_stats.h"
#include "policies/eviction/eviction_policy.h"

namespace kvgate::cache {

class HostTier {
 public:
  // A null policy means LRU. Throws std::invalid_argument for an invalid
  // identity or a negative capacity; a capacity below one record is a tier
  // of no slots (every reserve refused).
  HostTier(int64_t capacity_bytes, const KvIdentity& identity,
           std::unique_ptr<policies::EvictionPolicy> policy = nullptr);
  ~HostTier();
  HostTier(const HostTier&) = delete;
  HostTier& operator=(const HostTier&) = delete;

  const KvIdentity& identity() const { return identity_; }
  size_t record_bytes() const { return record_bytes_; }
  int32_t capacity_blocks() const { return n_slots_; }

  // The write side: a slot being filled is never a victim, and the tier's
  // lock is not held while its bytes are copied.
  class Reservation {
   public:
    Reservation(Reservation&& o) noexcept;
    Reservation& operator=(Reservation&& o) noexcept;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation();  // abandons (the slot is freed) unless published

    std::span<std::byte> bytes() const;  // record_bytes() long; write the payload, seal, publish
    const TierKey& key() const { return key_; }
    TenantId owner() const { return owner_; }
    // Indexes the record under key(): acquire() finds it and it becomes an
    // eviction candidate. The reservation is spent afterwards.
    void publish();

   private:
    friend class HostTier;
    Reservation(HostTier* tier, int32_t slot, const TierKey& key, TenantId owner)
        : tier_(tier), slot_(slot), key_(key), owner_(owner) {}
    HostTier* tier_ = nullptr;  // null once published, abandoned or moved from
    int32_t slot_ = -1;
    TierKey key_;
    TenantId owner_ = 0;
  };

  // A slot for `key` charged to `owner`: a free one, else the policy's
  // victim (evicted, counted). Nothing when the key is already stored or
  // being filled (not counted), or every slot is leased or reserved
  // (counted as refused). With owner_quota_blocks > 0, an owner that already
  // holds that many slots (stored or reserved) has its own entries evicted
  // first, in the policy's order, until it holds one fewer; the put is
  // refused (counted) when it has none evictable.
  std::optional<Reservation> reserve(const TierKey& key, TenantId owner, int64_t owner_quota_blocks = 0);

  // The read side: a lease pins a stored entry: it is not evicted and its
  // bytes do not change until the lease is dropped.
  class Lease {
   public:
    Lease(Lease&& o) noexcept;
    Lease& operator=(Lease&& o) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    std::span<const std::byte> bytes() const;
    const TierKey& key() const { return key_; }
    TenantId owner() const { return owner_; }

   private:
    friend class HostTier;
    Lease(HostTier* tier, int32_t slot, const TierKey& key, TenantId owner)
        : tier_(tier), slot_(slot), key_(key), owner_(owner) {}
    void drop();
    HostTier* tier_ = nullptr;
    int32_t slot_ = -1;
    TierKey key_;
    TenantId owner_ = 0;
  };
  // A stored entry, leased; counts a hit, or a miss when there is none.
  std::optional<Lease> acquire(const TierKey& key);
  // Whether `key` is stored (published, not dropped). Counts nothing.
  bool contains(const TierKey& key) const;

  // An entry found corrupt (check_record said `why`): out of the index now,
  // its slot freed now if no lease holds it, else when the last lease drops
  // (the caller's own lease included). Counted under fault_name(why), once
  // per entry; nothing happens for a key not stored.
  void drop_corrupt(const TierKey& key, RecordFault why);
  // The same for the record `lease` reads, only while that record is still
  // the one stored under its key (not when it was dropped and replaced).
  void drop_corrupt(const Lease& lease, RecordFault why);
  // Drops every stored entry charged to `tenant` that no lease holds
  // (counted as evicted); returns how many.
  int32_t evict_tenant(TenantId tenant);

  // Replaces the policy live: every entry stays, and the new policy learns
  // the candidates in the old one's eviction order (as BlockPool::set_policy).
  // Throws std::invalid_argument for a null policy.
  void set_policy(std::unique_ptr<policies::EvictionPolicy> policy);
  std::string policy_name() const;
  policies::PolicyParams policy_params() const;

  TierStats stats() const;

  // Told every block stored in or removed from this tier (block_event.h),
  // under the tier's lock; null: no one. Set before the tier is shared.
  void set_listener(BlockEventListener* listener) { listener_ = listener; }

  // Tests and fault injection only: runs `f` on the stored bytes of `key`
  // under the lock (flip bytes, tear a record). Refuses (false) a key that
  // is not stored or that a lease holds: a leased record's bytes are
  // promised stable, and changing them under a reader would be a data race.
  bool mutate_for_test(const TierKey& key, const std::function<void(std::span<std::byte>)>& f);
  // Checks the invariants at the top of host_tier.cpp; throws
  // std::logic_error naming the first one broken. Linear in the slots.
  void check_invariants() const;

 private:
  enum class SlotState : uint8_t { kFree, kReserved, kStored, kDropping };
  struct Slot {
    SlotState state = SlotState::kFree;
    int32_t leases = 0;
    TenantId owner = 0;
    TierKey key;
    int32_t depth = 0;  // from the sealed record's header, for the policy
  };
  struct TenantCount {
    int64_t stored = 0, reserved = 0;
  };

  std::span<std::byte> slot_bytes(int32_t slot) const;
  policies::EntryInfo entry_info(int32_t slot) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A stored, unleased slot leaves (counted evicted); it is free, not listed.
  void evict_locked(int32_t slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void free_locked(int32_t slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);  // back on the free list
  std::optional<int32_t> victim_locked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<int32_t> victim_of_locked(TenantId owner) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void publish(int32_t slot) ABSL_LOCKS_EXCLUDED(mu_);
  void abandon(int32_t slot) ABSL_LOCKS_EXCLUDED(mu_);
  void drop_locked(const TierKey& key, int32_t only_slot, RecordFault why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);  // only_slot < 0: whichever
  void release(int32_t slot) ABSL_LOCKS_EXCLUDED(mu_);
  void tell_locked(BlockEventKind kind, const Slot& s, const BlockHash& parent = {}) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void check_invariants_locked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void debug_check_locked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const KvIdentity identity_;
  const size_t record_bytes_;
  const int32_t n_slots_;
  const int64_t capacity_bytes_;
  // Not guarded: a slot's bytes belong to its Reservation, or are immutable
  // while leased (see the top of this file).
  std::unique_ptr<std::byte[]> arena_;

  mutable Mutex mu_;
  std::unique_ptr<policies::EvictionPolicy> policy_ ABSL_GUARDED_BY(mu_);
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  std::vector<int32_t> free_list_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<TierKey, int32_t, TierKeyHasher> index_ ABSL_GUARDED_BY(mu_);  // reserved and stored slots
  std::unordered_map<TenantId, TenantCount> tenants_ ABSL_GUARDED_BY(mu_);
  // Stored slots; slots (stored or dropping) with leases.
  int64_t n_stored_ ABSL_GUARDED_BY(mu_) = 0, n_leased_ ABSL_GUARDED_BY(mu_) = 0;
  TierStats counters_ ABSL_GUARDED_BY(mu_);  // stored, refused, evicted, hits, misses, faults
  // Set before the tier is shared, then only read: needs no lock.
  BlockEventListener* listener_ = nullptr;
};

}  // namespace kvgate::cache
