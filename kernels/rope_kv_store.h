// RoPE and the K/V store, fused: one pass over each new token's q, k and v
// rotates q's heads in place and writes k's heads rotated, and v as it is,
// into the token's slot of its block in the pool's element type. The
// rotated k is needed only in the pool (attention reads K from there), so
// it is never written back to the activations, and a layer launches one
// kernel for both steps.
//
// RoPE as the CPU applies it (engine/cpu/rowwise.h): pair i of each head's
// first rope_dim values -- adjacent, (x[2i], x[2i+1]) (llama.cpp's "normal":
// llama), or halves, (x[i], x[i + rope_dim/2]) ("neox": qwen2, qwen3,
// gemma, phi3) -- turns by the angles of engine/rope_angles.h, the table
// the CPU uses too, uploaded, so both backends rotate by the same numbers.
// A layer may have a table of its own (sliding-window layers: their own
// base and scale); the caller passes the one for the layer. A slot
// is named as block * block_size + slot (vLLM's slot mapping), computed on
// the host from the block table, so the kernel never looks at a table.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "engine/kv_layout.h"
#include "kernels/kv_pool_geometry.h"

namespace kvgate::cuda {

// engine/rope_angles.h's table on the device.
struct RopeTable {
  const float* cos;
  const float* sin;
  int32_t half;
  bool halves = false;  // pair i is (x[i], x[i + half]); else (x[2i], x[2i + 1])
};

// Where value d of a head sits in RoPE's pairing: pair `pair` (>= half:
// past rope_dim, not turned), as its first or second value, the pair's
// first value at offset `first` of the head and its second `gap` after it.
// Host and device: the kernel indexes by it and a test without a device
// checks it against the CPU's pairing.
struct RopeSlot {
  int32_t pair, first, gap;
  bool second;
};
__host__ __device__ inline RopeSlot rope_slot(const RopeTable& rope, int32_t d) {
  const int32_t half = rope.half;
  if (rope.halves) {
    const bool second = d >= half && d < 2 * half;
    const int32_t pair = second ? d - half : d < half ? d : half + d;  // past rope_dim: >= half
    return {pair, second ? d - half : d, half, second};
  }
  return {d / 2, d - d % 2, 1, d % 2 == 1};
}

// Rows of the fused Q/K/V projection: row r holds q (n_heads heads), then
// k and v (kv_dim = g.kv_dim values each), starting at x + r * stride.
struct QkvRows {
  float* x;
  int64_t stride;
  int32_t n_heads, head_dim;
};

// For r < n, at position pos[r]: q's heads rotated in place; layer
// `layer`'s K at slots[r] <- k rotated, V <- v, converted to `type`. A
// negative slot stores nothing (a padding row of a step replayed as a CUDA
// graph); its q is still rotated.
void rope_store_kv(QkvRows rows, const int32_t* pos, const int64_t* slots, int64_t n, const RopeTable& rope,
                   const KvPoolGeometry& g, KvType type, void* pool, int32_t layer, cudaStream_t stream);

}  // namespace kvgate::cuda
