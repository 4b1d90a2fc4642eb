// Batched whole-block copies between the device KV pool and pinned host
// memory, on a stream of their own, for the cache tiers (offload, restore)
// and the Backend's single-block copies. Ordered against the compute stream
// with events, never by synchronizing the device: a copy out starts after
// the compute work queued before it (so it sees the K/V that work writes),
// and compute queued after a copy in waits for it (so it reads the restored
// K/V). Runs of consecutive block ids go as one copy each.
//
// Thread ownership: the backend's, driven by the engine loop.
#pragma once

#include <cstddef>
#include <span>

#include "cache/ids.h"
#include "kernels/stream.h"

namespace kvgate::cuda {

class BlockTransfer {
 public:
  BlockTransfer(std::byte* pool, size_t block_bytes, int32_t n_blocks);

  // Queues blocks[i] -> dst + i * block_bytes, after the work queued on `compute` so far.
  void to_host(std::span<const BlockId> blocks, std::byte* pinned_dst, cudaStream_t compute);
  // Queues src + i * block_bytes -> blocks[i]; work queued on `compute` later waits for it.
  void from_host(std::span<const BlockId> blocks, const std::byte* pinned_src, cudaStream_t compute);
  // Until every queued copy has finished (the host buffers may then be reused).
  void wait();

 private:
  void check_ids(std::span<const BlockId> blocks) const;
  template <typename Copy>
  void for_each_run(std::span<const BlockId> blocks, Copy&& copy);

  std::byte* pool_;
  size_t block_bytes_;
  int32_t n_blocks_;
  Stream stream_;
  Event before_, after_;
};

}  // namespace kvgate::cuda
