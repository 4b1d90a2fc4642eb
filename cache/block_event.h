// Block events: what the prefix cache tells the world when a block enters
// (stored) or leaves (removed) it, so that a KV-aware router in front of
// several engines can send a request where its prefix already is (NVIDIA
// Dynamo's KV router works from the same two events).
//
// The listener is called synchronously on the thread that owns the pool, in
// the middle of a pool operation: it must be quick and must not call back
// into the pool (copy what it needs and queue it).
#pragma once

#include <cstdint>
#include <span>

#include "cache/block_hash.h"
#include "cache/hash128.h"

namespace kvgate::cache {

using BlockId = int32_t;  // a block of the device KV pool, as the engine's

enum class BlockEventKind : uint8_t { kStored, kRemoved };

struct BlockEvent {
  BlockEventKind kind;
  BlockId block;                    // local only: meaningless to another process
  BlockHash hash;                   // the chain link: what other processes match on
  BlockHash parent;                 // the previous link (the chain seed for depth 0)
  ScopeId scope;
  int32_t depth;                    // index of the block in its chain
  std::span<const TokenId> tokens;  // the block's tokens; valid during the call only
};

class BlockEventListener {
 public:
  virtual ~BlockEventListener() = default;
  virtual void on_block_event(const BlockEvent& e) = 0;
};

}  // namespace kvgate::cache
