// EvictionPolicy: which unreferenced cached block a cache tier gives up first.
//
// The cache tells the policy what happens to each entry (a KV block, named by
// an opaque EntryId the tier chooses) and asks it for a victim when it needs
// room. The policy only orders entries: it owns no memory of the blocks, does
// no I/O and takes no locks; the tier that owns it calls it from the one
// thread that owns the tier.
//
// An entry's life, as the policy sees it:
//   on_insert   the entry entered the cache. It is referenced (its writer
//               still holds it), so it is not a candidate yet.
//   on_hit      a lookup reused it; it is referenced now (not a candidate).
//   on_release  its last reference was dropped: it is a candidate.
//   on_remove   it left the cache (evicted, or dropped); forget it.
// victim() names the candidate to give up next, or nothing when there is
// none; the caller evicts it and then calls on_remove. A victim is always a
// candidate: the cache checks, because evicting a referenced block would
// corrupt a running request.
//
// Switching policy at run time without losing what is cached: read the old
// policy's eviction_order(), then tell the new one on_insert for every cached
// entry and on_release for the candidates in that order (next victim first),
// so the new policy starts from the old one's ranking instead of from nothing.
// What a policy learned beyond the order (hit counts, ghosts) is not carried.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policies/ids.h"

namespace kvgate::policies {

using EntryId = int32_t;

// Which tier the entry lives in (tiers beyond the device come later).
enum class Tier : uint8_t { kDevice, kHost, kDisk };

struct EntryInfo {
  int32_t depth = 0;       // index of the block in its hash chain: 0 = the first block of a prompt
  TenantId tenant = 0;     // who wrote it (non-secret): tenant-fair policies group by it
  int64_t size_bytes = 0;  // what evicting it frees
  Tier tier = Tier::kDevice;
  // A stable, non-secret name of the block's content (the low half of its
  // chain hash, which block events already carry), the same whichever entry
  // id holds it. Policies that remember evicted blocks (S3-FIFO's ghosts)
  // recognise one that comes back by it. 0 = not given: such a policy then
  // takes every insert for a block it has never seen.
  uint64_t key = 0;
};

// A policy's parameters by name (what `name:key=value,...` sets; see
// policy_registry.h).
using PolicyParams = std::map<std::string, double>;

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;

  virtual std::string_view name() const = 0;
  virtual void on_insert(EntryId id, const EntryInfo& info) = 0;
  virtual void on_hit(EntryId id) = 0;
  virtual void on_release(EntryId id) = 0;
  virtual void on_remove(EntryId id) = 0;
  virtual std::optional<EntryId> victim() const = 0;
  // How many entries are candidates now (for invariant checks).
  virtual int64_t candidates() const = 0;

  // Every candidate, next victim first: the victims victim() would name one
  // after another if each were removed and nothing else happened. Linear in
  // the candidates; for handing the cache to another policy (above) and for
  // display.
  virtual std::vector<EntryId> eviction_order() const = 0;
  // The parameters in effect, defaults included (for display).
  virtual PolicyParams params() const { return {}; }
};

}  // namespace kvgate::policies
