#include "engine/cpu/kv_pool.h"

#include <cstring>

#include "engine/error.h"

namespace kvgate {

KvPool::KvPool(int32_t n_layers, int32_t n_blocks, int32_t block_size, int32_t kv_dim)
    : n_layers_(n_layers), n_blocks_(n_blocks), block_size_(block_size), kv_dim_(kv_dim) {
  size_t n = static_cast<size_t>(n_layers) * n_blocks * layer_block_floats();
  k_.assign(n, 0.0f);
  v_.assign(n, 0.0f);
}

void KvPool::copy_block_out(BlockId b, std::span<std::byte> dst) const {
  if (b < 0 || b >= n_blocks_ || dst.size() != block_bytes()) throw Error("copy_block_out: bad block or buffer size");
  const size_t bytes = layer_block_floats() * sizeof(float);
  std::byte* out = dst.data();
  for (int32_t l = 0; l < n_layers_; ++l) {
    std::memcpy(out, k(l, b, 0), bytes);
    std::memcpy(out + bytes, v(l, b, 0), bytes);
    out += 2 * bytes;
  }
}

void KvPool::copy_block_in(BlockId b, std::span<const std::byte> src) {
  if (b < 0 || b >= n_blocks_ || src.size() != block_bytes()) throw Error("copy_block_in: bad block or buffer size");
  const size_t bytes = layer_block_floats() * sizeof(float);
  const std::byte* in = src.data();
  for (int32_t l = 0; l < n_layers_; ++l) {
    std::memcpy(k(l, b, 0), in, bytes);
    std::memcpy(v(l, b, 0), in + bytes, bytes);
    in += 2 * bytes;
  }
}

}  // namespace kvgate
