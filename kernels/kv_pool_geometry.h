// Where a K or V value lives in the CUDA backend's KV pool.
//
// The pool is block-major: block b is one contiguous run of block_bytes,
// arranged [layer][K, V][slot][kv_dim] — exactly KvLayout's
// "layer-major.kv.slot.kvdim.v1" arrangement of a block copied to the host.
// So a block moves to or from host memory, or to another block
// (copy-on-write), as one contiguous copy, and its bytes on the host are the
// CPU backend's for f32 K/V. Elements are f32, f16 or bf16 (KvType).
#pragma once

#include <cstdint>

#include "engine/kv_layout.h"

#if defined(__CUDACC__)
#define KVGATE_HOST_DEVICE __host__ __device__
#else
#define KVGATE_HOST_DEVICE
#endif

namespace kvgate::cuda {

struct KvPoolGeometry {
  int32_t n_layers = 0;
  int32_t block_size = 0;  // token slots per block
  int32_t kv_dim = 0;      // kv_heads x head_dim

  // Element index of slot `slot`'s K (kv 0) or V (kv 1) row in `layer` of `block`.
  KVGATE_HOST_DEVICE int64_t offset(int32_t block, int32_t layer, int32_t kv, int32_t slot) const {
    return (((static_cast<int64_t>(block) * n_layers + layer) * 2 + kv) * block_size + slot) * kv_dim;
  }
  KVGATE_HOST_DEVICE int64_t block_elems() const { return static_cast<int64_t>(n_layers) * 2 * block_size * kv_dim; }
};

}  // namespace kvgate::cuda
