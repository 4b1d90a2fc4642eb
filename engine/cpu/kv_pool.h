// The CPU backend's KV pool: every layer's keys and values, in fixed-size
// blocks of `block_size` token slots.
//
// Layout, per layer: K and V each [n_blocks][block_size][kv_dim] f32, so one
// token's keys for all KV heads are contiguous and a block is one contiguous
// run per layer: the unit the prefix cache shares and the tiers move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/batch.h"

namespace kvgate {

class KvPool {
 public:
  KvPool(int32_t n_layers, int32_t n_blocks, int32_t block_size, int32_t kv_dim);

  int32_t n_blocks() const { return n_blocks_; }
  int32_t block_size() const { return block_size_; }
  int32_t kv_dim() const { return kv_dim_; }

  float* k(int32_t layer, BlockId b, int32_t slot) { return at(k_, layer, b, slot); }
  float* v(int32_t layer, BlockId b, int32_t slot) { return at(v_, layer, b, slot); }
  const float* k(int32_t layer, BlockId b, int32_t slot) const { return at(k_, layer, b, slot); }
  const float* v(int32_t layer, BlockId b, int32_t slot) const { return at(v_, layer, b, slot); }

  // One block's K and V for every layer: 2 x layers x block_size x kv_dim floats.
  size_t block_bytes() const { return 2 * layer_block_floats() * n_layers_ * sizeof(float); }
  void copy_block_out(BlockId b, std::span<std::byte> dst) const;
  void copy_block_in(BlockId b, std::span<const std::byte> src);

 private:
  size_t layer_block_floats() const { return static_cast<size_t>(block_size_) * kv_dim_; }
  size_t offset(int32_t layer, BlockId b, int32_t slot) const {
    return (static_cast<size_t>(layer) * n_blocks_ + b) * layer_block_floats() +
           static_cast<size_t>(slot) * kv_dim_;
  }
  float* at(std::vector<float>& s, int32_t layer, BlockId b, int32_t slot) { return s.data() + offset(layer, b, slot); }
  const float* at(const std::vector<float>& s, int32_t layer, BlockId b, int32_t slot) const {
    return s.data() + offset(layer, b, slot);
  }

  int32_t n_layers_, n_blocks_, block_size_, kv_dim_;
  std::vector<float> k_, v_;
};

}  // namespace kvgate
