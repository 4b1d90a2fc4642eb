// The CPU backend's KV pool: every layer's keys and values, in fixed-size
// blocks of `block_size` token slots, stored as one element type (f32, f16
// or bf16; kv_element.h). The math runs in f32: values are narrowed once, as
// they are stored, and widened in registers as attention reads them.
//
// Layout, per layer: K and V each [n_blocks][block_size][kv_dim] elements,
// so one token's keys for all KV heads are contiguous and a block is one
// contiguous run per layer: the unit the prefix cache shares and the tiers
// move. A block copied out is, per layer, its K run then its V run, in the
// stored type (KvLayout's "layer-major.kv.slot.kvdim.v1", as the CUDA
// backend's), so a copy in from a host buffer is bit-exact.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "engine/batch.h"
#include "engine/cpu/kv_element.h"
#include "engine/kv_layout.h"

namespace kvgate {

class KvPool {
 public:
  KvPool(KvType type, int32_t n_layers, int32_t n_blocks, int32_t block_size, int32_t kv_dim);

  KvType type() const { return type_; }
  int32_t n_blocks() const { return n_blocks_; }
  int32_t block_size() const { return block_size_; }
  int32_t kv_dim() const { return kv_dim_; }

  // One token's keys (values) for every KV head, kv_dim elements of type E,
  // which must be the pool's own (cpu::with_kv_element picks it).
  template <typename E>
  E* k(int32_t layer, BlockId b, int32_t slot) { return at<E>(k_, layer, b, slot); }
  template <typename E>
  E* v(int32_t layer, BlockId b, int32_t slot) { return at<E>(v_, layer, b, slot); }
  template <typename E>
  const E* k(int32_t layer, BlockId b, int32_t slot) const { return at<E>(k_, layer, b, slot); }
  template <typename E>
  const E* v(int32_t layer, BlockId b, int32_t slot) const { return at<E>(v_, layer, b, slot); }

  // Writes one token's keys and values (kv_dim f32 each) into its slot,
  // rounded to the element type (nearest even).
  void store(int32_t layer, BlockId b, int32_t slot, const float* keys, const float* values);

  // One block's K and V for every layer: 2 x layers x block_size x kv_dim elements.
  size_t block_bytes() const { return 2 * layer_block_bytes() * n_layers_; }
  void copy_block_out(BlockId b, std::span<std::byte> dst) const;
  void copy_block_in(BlockId b, std::span<const std::byte> src);
  // Copy-on-write: block dst becomes a copy of block src.
  void copy_block(BlockId src, BlockId dst);

 private:
  size_t layer_block_bytes() const { return static_cast<size_t>(block_size_) * kv_dim_ * element_bytes_; }
  size_t offset(int32_t layer, BlockId b, int32_t slot) const {
    return (static_cast<size_t>(layer) * n_blocks_ + b) * layer_block_bytes() +
           static_cast<size_t>(slot) * kv_dim_ * element_bytes_;
  }
  // Anonymous pages from mmap: the kernel zeroes each on its first touch,
  // so the pool costs resident memory only as blocks are written. (A
  // vector's value-initialisation wrote every byte at construction: a 1 GiB
  // pool was 1 GiB resident before the first request.) Page-aligned, so
  // aligned for every element type.
  class Pages {
   public:
    explicit Pages(size_t bytes);
    ~Pages();
    Pages(const Pages&) = delete;
    Pages& operator=(const Pages&) = delete;
    Pages(Pages&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    Pages& operator=(Pages&& o) noexcept {
      std::swap(data_, o.data_);
      std::swap(bytes_, o.bytes_);
      return *this;
    }
    std::byte* data() { return data_; }
    const std::byte* data() const { return data_; }

   private:
    std::byte* data_;
    size_t bytes_;
  };

  template <typename E>
  E* at(Pages& s, int32_t layer, BlockId b, int32_t slot) {
    assert(cpu::kv_type_of<E>() == type_);
    return reinterpret_cast<E*>(s.data() + offset(layer, b, slot));
  }
  template <typename E>
  const E* at(const Pages& s, int32_t layer, BlockId b, int32_t slot) const {
    assert(cpu::kv_type_of<E>() == type_);
    return reinterpret_cast<const E*>(s.data() + offset(layer, b, slot));
  }
  void check_block(BlockId b, const char* who) const;
  size_t plane_bytes() const { return static_cast<size_t>(n_layers_) * n_blocks_ * layer_block_bytes(); }

  KvType type_;
  size_t element_bytes_;
  int32_t n_layers_, n_blocks_, block_size_, kv_dim_;
  Pages k_, v_;  // every layer's keys, then every layer's values, zero until written
};

}  // namespace kvgate
