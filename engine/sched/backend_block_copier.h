// The Backend seen as the cache's BlockCopier: the adapter that keeps
// cache/ free of any dependency on engine/.
#pragma once

#include "cache/block_copier.h"
#include "engine/backend.h"

namespace kvgate {

class BackendBlockCopier final : public cache::BlockCopier {
 public:
  explicit BackendBlockCopier(Backend& backend) : backend_(backend) {}

  size_t block_bytes() const override { return backend_.block_bytes(); }
  void to_host(BlockId block, std::span<std::byte> dst) const override { backend_.copy_block_to_host(block, dst); }
  void from_host(BlockId block, std::span<const std::byte> src) override { backend_.copy_block_from_host(block, src); }
  void copy(BlockId src, BlockId dst) override { backend_.copy_block(src, dst); }

 private:
  Backend& backend_;
};

}  // namespace kvgate
