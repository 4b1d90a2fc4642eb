// Block events: what the prefix cache tells the world when a block enters
// (stored) or leaves (removed) it, so that a KV-aware router in front of
// several engines can send a request where its prefix already is (NVIDIA
// Dynamo's KV router works from the same two events).
//
// Nothing secret leaves in an event (DESIGN invariant 7): not the cache
// scope, not the chain seed derived from it, not the block's token ids;
// only the scope-chained hash links and the tenant's label.
//
// The device pool tells its listener on the thread that owns the pool, in
// the middle of a pool operation; the host and disk tiers (cache/tiers/)
// tell theirs under their own lock, from whichever thread changed them. So
// a listener must be quick, thread-safe, and must not call back into what
// called it (copy what it needs and queue it).
//
// The tiers copy blocks down at commit (write-through), so a block is never
// moved from one tier to another: it is stored in each, and removed from
// each, on its own.
#pragma once

#include <cstdint>

#include "cache/block_hash.h"
#include "cache/hash128.h"
#include "cache/ids.h"
#include "policies/eviction/eviction_policy.h"
#include "policies/ids.h"

namespace kvgate::cache {

enum class BlockEventKind : uint8_t { kStored, kRemoved };

struct BlockEvent {
  BlockEventKind kind;
  BlockId block;                    // the device pool's, local only; -1 from a tier below
  BlockHash hash;                   // the chain link: what other processes match on
  // The previous link; zero at depth 0 (the seed stays secret), and where
  // a tier does not keep it (a removal below the device).
  BlockHash parent;
  TenantId tenant;                  // who wrote it: a non-secret label
  int32_t depth;                    // index of the block in its chain
  policies::Tier tier = policies::Tier::kDevice;
};

class BlockEventListener {
 public:
  virtual ~BlockEventListener() = default;
  virtual void on_block_event(const BlockEvent& e) = 0;
};

}  // namespace kvgate::cache
