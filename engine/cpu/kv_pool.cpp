#include "engine/cpu/kv_pool.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/error.h"

namespace kvgate {

KvPool::KvPool(KvType type, int32_t n_layers, int32_t n_blocks, int32_t block_size, int32_t kv_dim)
    : type_(type),
      element_bytes_(static_cast<size_t>(kv_type_bytes(type))),
      n_layers_(n_layers),
      n_blocks_(n_blocks),
      block_size_(block_size),
      kv_dim_(kv_dim),
      k_(plane_bytes()),
      v_(plane_bytes()) {}

KvPool::Pages::Pages(size_t bytes) : bytes_(bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error("KV pool: cannot map " + std::to_string(bytes) + " bytes (" + std::strerror(errno) +
                "): lower the KV budget");
  data_ = static_cast<std::byte*>(p);
}

KvPool::Pages::~Pages() {
  if (data_) munmap(data_, bytes_);
}

void KvPool::store(int32_t layer, BlockId b, int32_t slot, const float* keys, const float* values) {
  cpu::with_kv_element(type_, [&]<typename E>(E) {
    cpu::narrow_row(keys, k<E>(layer, b, slot), kv_dim_);
    cpu::narrow_row(values, v<E>(layer, b, slot), kv_dim_);
  });
}

void KvPool::check_block(BlockId b, const char* who) const {
  if (b < 0 || b >= n_blocks_)
    throw Error(std::string(who).append(": block id ").append(std::to_string(b)).append(" is outside the pool"));
}

void KvPool::copy_block_out(BlockId b, std::span<std::byte> dst) const {
  check_block(b, "copy_block_out");
  if (dst.size() != block_bytes()) throw Error("copy_block_out: bad buffer size");
  const size_t bytes = layer_block_bytes();
  std::byte* out = dst.data();
  for (int32_t l = 0; l < n_layers_; ++l) {
    std::memcpy(out, k_.data() + offset(l, b, 0), bytes);
    std::memcpy(out + bytes, v_.data() + offset(l, b, 0), bytes);
    out += 2 * bytes;
  }
}

void KvPool::copy_block_in(BlockId b, std::span<const std::byte> src) {
  check_block(b, "copy_block_in");
  if (src.size() != block_bytes()) throw Error("copy_block_in: bad buffer size");
  const size_t bytes = layer_block_bytes();
  const std::byte* in = src.data();
  for (int32_t l = 0; l < n_layers_; ++l) {
    std::memcpy(k_.data() + offset(l, b, 0), in, bytes);
    std::memcpy(v_.data() + offset(l, b, 0), in + bytes, bytes);
    in += 2 * bytes;
  }
}

void KvPool::copy_block(BlockId src, BlockId dst) {
  check_block(src, "copy_block");
  check_block(dst, "copy_block");
  if (src == dst) return;
  const size_t bytes = layer_block_bytes();
  for (int32_t l = 0; l < n_layers_; ++l) {
    std::memcpy(k_.data() + offset(l, dst, 0), k_.data() + offset(l, src, 0), bytes);
    std::memcpy(v_.data() + offset(l, dst, 0), v_.data() + offset(l, src, 0), bytes);
  }
}

}  // namespace kvgate
