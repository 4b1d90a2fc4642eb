// BlockCopier: how the cache moves a block's K/V without knowing the engine.
// The tiers copy device blocks to host buffers and back through it, and the
// prefix cache's copy-on-write duplicates a block inside the device pool;
// the engine adapts its Backend to it (engine/sched/backend_block_copier.h),
// so cache/ never depends on engine/. A block's bytes are opaque here.
//
// Thread ownership: that of the device pool (the engine loop), which may
// call from_host for distinct blocks from several threads at once (the
// tiers' restore spreads a chain over its OpenMP team). The tiers' mover
// calls to_host from its own thread, for blocks it holds a reference on.
#pragma once

#include <cstddef>
#include <span>

#include "cache/ids.h"

namespace kvgate::cache {

class BlockCopier {
 public:
  virtual ~BlockCopier() = default;
  virtual size_t block_bytes() const = 0;
  virtual void to_host(BlockId block, std::span<std::byte> dst) const = 0;
  virtual void from_host(BlockId block, std::span<const std::byte> src) = 0;
  // Device to device: `dst` becomes a copy of `src`.
  virtual void copy(BlockId src, BlockId dst) = 0;
};

}  // namespace kvgate::cache
