// Block events: what the prefix cache tells the world when a block enters
// (stored) or leaves (removed) it, so that a KV-aware router in front of
// several engines can send a request where its prefix already is (NVIDIA
// Dynamo's KV router works from the same two events).
//
// Nothing secret leaves in an event (DESIGN invariant 7): not the cache
// scope, not the chain seed derived from it, not the block's token ids;
// only the scope-chained hash links and the tenant's label.
//
// The listener is called synchronously on the thread that owns the pool, in
// the middle of a pool operation: it must be quick and must not call back
// into the pool (copy what it needs and queue it).
#pragma once

#include <cstdint>

#include "cache/block_hash.h"
#include "cache/hash128.h"
#include "cache/ids.h"
#include "policies/ids.h"

namespace kvgate::cache {

enum class BlockEventKind : uint8_t { kStored, kRemoved };

struct BlockEvent {
  BlockEventKind kind;
  BlockId block;                    // local only: meaningless to another process
  BlockHash hash;                   // the chain link: what other processes match on
  BlockHash parent;                 // the previous link; zero at depth 0 (the seed stays secret)
  TenantId tenant;                  // who wrote it: a non-secret label
  int32_t depth;                    // index of the block in its chain
};

class BlockEventListener {
 public:
  virtual ~BlockEventListener() = default;
  virtual void on_block_event(const BlockEvent& e) = 0;
};

}  // namespace kvgate::cache
