#include "kernels/block_transfer.h"

#include <string>

namespace kvgate::cuda {

BlockTransfer::BlockTransfer(std::byte* pool, size_t block_bytes, int32_t n_blocks)
    : pool_(pool), block_bytes_(block_bytes), n_blocks_(n_blocks) {}

void BlockTransfer::check_ids(std::span<const BlockId> blocks) const {
  for (BlockId b : blocks)
    if (b < 0 || b >= n_blocks_)
      throw Error("block copy: block id " + std::to_string(b) + " is outside the pool of " +
                  std::to_string(n_blocks_));
}

// Calls copy(first block, index of it in `blocks`, count) for each run of
// consecutive ids.
template <typename Copy>
void BlockTransfer::for_each_run(std::span<const BlockId> blocks, Copy&& copy) {
  for (size_t i = 0; i < blocks.size();) {
    size_t n = 1;
    while (i + n < blocks.size() && blocks[i + n] == blocks[i] + static_cast<BlockId>(n)) ++n;
    copy(blocks[i], i, n);
    i += n;
  }
}

void BlockTransfer::to_host(std::span<const BlockId> blocks, std::byte* pinned_dst, cudaStream_t compute) {
  check_ids(blocks);
  before_.order(compute, stream_.get());
  for_each_run(blocks, [&](BlockId first, size_t at, size_t n) {
    check(cudaMemcpyAsync(pinned_dst + at * block_bytes_, pool_ + static_cast<size_t>(first) * block_bytes_,
                          n * block_bytes_, cudaMemcpyDeviceToHost, stream_.get()),
          "block copy to host");
  });
}

void BlockTransfer::from_host(std::span<const BlockId> blocks, const std::byte* pinned_src, cudaStream_t compute) {
  check_ids(blocks);
  before_.order(compute, stream_.get());  // nothing queued earlier still reads the old bytes
  for_each_run(blocks, [&](BlockId first, size_t at, size_t n) {
    check(cudaMemcpyAsync(pool_ + static_cast<size_t>(first) * block_bytes_, pinned_src + at * block_bytes_,
                          n * block_bytes_, cudaMemcpyHostToDevice, stream_.get()),
          "block copy from host");
  });
  after_.order(stream_.get(), compute);
}

void BlockTransfer::wait() { stream_.synchronize("block copy"); }

}  // namespace kvgate::cuda
