// Paged attention for decode: each decoding sequence's one query token
// against every earlier position of its sequence, K/V read through its
// block table, many sequences of different lengths in one launch.
//
// Decode attention is a stream over the KV cache, so two things decide its
// speed: bytes read and how much of the device reads them. The query heads
// that share a KV head (GQA) are computed together, so each K/V row is read
// once per group, not once per query head. And each query's context is cut
// into S contiguous parts ("split-K", as flash decoding), each part a thread
// block of its own, so that one sequence at batch 1 still spreads over every
// SM; a second small kernel merges the parts' softmax partials. The softmax
// is online (running maximum and sum, as FlashAttention's), so no score
// vector is kept and a context of any length runs in the same memory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/kv_layout.h"
#include "kernels/attention_batch.h"
#include "kernels/kv_pool_geometry.h"

namespace kvgate::cuda {

// Part `split` of n_splits of the context a decode query at `pos` sees,
// positions [begin, end): the visible positions [first_seen, pos] cut into
// parts of ceil(n / n_splits), so the last parts may be short or empty
// (begin == end). Host and device: the kernel cuts its part by it, and a
// test without a device checks that the parts tile the window.
struct DecodePart {
  int32_t begin, end;
};
__host__ __device__ inline DecodePart decode_part(const AttentionShape& s, int32_t pos, int32_t split,
                                                  int32_t n_splits) {
  const int32_t first = first_seen(s, pos), n = pos + 1 - first, len = (n + n_splits - 1) / n_splits;
  const int32_t b = split * len < n ? split * len : n;
  return {first + b, first + (b + len < n ? b + len : n)};
}

// Query heads per KV head (n_heads / n_kv_heads) the kernel computes
// together: its per-thread accumulators are sized for this many. Llama-3
// has 4, Qwen2 up to 7; above this the launcher throws.
inline constexpr int32_t kMaxDecodeGroup = 16;
// The most parts a context is split into: past this the merge costs more
// than the parallelism gains.
inline constexpr int32_t kMaxDecodeSplits = 32;

// The number of parts S each query's context is split into, for n queries.
// It depends on n, n_kv_heads and the device's SM count only, never on the
// positions, so a step captured in a CUDA graph keeps a valid grid while
// the positions change between replays: S = 1 once n * n_kv_heads blocks
// give every SM two, otherwise enough parts for that, at most
// kMaxDecodeSplits. The SM count is read once per process (the current
// device at the first call), so this function and the launch always agree.
int32_t paged_decode_splits(const AttentionShape& shape, int32_t n);

// Bytes of device workspace paged_decode_attention needs for n queries: the
// parts' partial results, or 0 when S = 1 (the kernel then writes `out`
// directly). Not monotone in n (S falls as n grows), so a caller that
// captures graphs for several batch sizes sizes the workspace for the
// largest value over them before capturing any.
size_t paged_decode_workspace_bytes(const AttentionShape& shape, int32_t n);

// For each query i < n: out[queries[i].row] = softmax(q K^T * scale) V over
// positions [0, pos]. q and out rows are q_stride and out_stride floats
// apart, each holding n_heads heads of head_dim values. `workspace` holds at
// least paged_decode_workspace_bytes(shape, n) bytes (may be null when that
// is 0); nothing is allocated here, so the launch can be captured in a CUDA
// graph. Throws kvgate::Error for a shape it cannot run (head_dim above
// kMaxHeadDim, a group above kMaxDecodeGroup) before anything is queued.
void paged_decode_attention(const KvPoolGeometry& g, KvType type, const void* pool, int32_t layer,
                            const AttentionShape& shape, const float* q, int64_t q_stride, float* out,
                            int64_t out_stride, const DecodeQuery* queries, int32_t n, const int32_t* tables,
                            void* workspace, cudaStream_t stream);

}  // namespace kvgate::cuda
