// Prefill attention: a chunk of a sequence's new tokens against the cached
// prefix plus the chunk itself (causal), K/V read through the block table.
// Tiled as FlashAttention is: a tile of query rows walks the key positions
// a tile at a time through shared memory with an online softmax (running
// maximum, running sum, rescaled accumulator), so no score matrix is ever
// held and memory does not grow with the context. f16 / bf16 K/V with a
// head_dim that is a multiple of 16 run on the tensor cores (WMMA, f32
// accumulation; Q and the softmax weights rounded to the K/V type: parity
// with the f32 reference is to about that type's precision, not to 1e-4); f32
// K/V, and other head_dims, on the f32 CUDA-core kernel. The choice is
// internal; the launcher allocates nothing (graph-capturable).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/kv_layout.h"
#include "kernels/attention_batch.h"
#include "kernels/kv_pool_geometry.h"

namespace kvgate::cuda {

// For each tile, each of its rows r (position pos + r) gets softmax(q K^T *
// scale) V over positions [0, pos + r], in every query head.
void prefill_attention(const KvPoolGeometry& g, KvType type, const void* pool, int32_t layer,
                       const AttentionShape& shape, const float* q, int64_t q_stride, float* out, int64_t out_stride,
                       const PrefillTile* tiles, int32_t n_tiles, const int32_t* tables, cudaStream_t stream);

}  // namespace kvgate::cuda
