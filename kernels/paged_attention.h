// Paged attention for decode: each decoding sequence's one query token
// against every earlier position of its sequence, K/V read through its
// block table, many sequences of different lengths in one launch. Grouped
// query heads read their shared KV head. The softmax is online (running
// maximum and sum, as FlashAttention's), so no score vector is kept and a
// context of any length runs in the same registers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/kv_layout.h"
#include "kernels/attention_batch.h"
#include "kernels/kv_pool_geometry.h"

namespace kvgate::cuda {

// For each query i < n: out[queries[i].row] = softmax(q K^T * scale) V over
// positions [0, pos]. q and out rows are q_stride and out_stride floats
// apart, each holding n_heads heads of head_dim values.
void paged_decode_attention(const KvPoolGeometry& g, KvType type, const void* pool, int32_t layer,
                            const AttentionShape& shape, const float* q, int64_t q_stride, float* out,
                            int64_t out_stride, const DecodeQuery* queries, int32_t n, const int32_t* tables,
                            cudaStream_t stream);

}  // namespace kvgate::cuda
