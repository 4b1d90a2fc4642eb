// What the attention kernels are told about a step: the query rows, their
// positions, and the block tables to read K/V through. Built on the host by
// the step plan (step_plan.h) and copied to the device with the rest of the
// step's metadata. A row at position p attends to positions [0, p] of its
// sequence (its last `window` positions on sliding layers); position p lives
// in block table[p / B], slot p % B.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kvgate::cuda {

// One layer's attention: a sliding-window layer (gemma, phi3) has its own
// window, so the backend passes a shape per layer.
struct AttentionShape {
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;  // n_heads / n_kv_heads query heads share a KV head (GQA)
  int32_t head_dim = 0;    // at most kMaxHeadDim
  float scale = 0;         // of the scores: ModelConfig::attention_scale(), usually 1 / sqrt(head_dim)
  // > 0: each scaled score s becomes tanh(s * (1 / softcap)) * softcap
  // before the softmax, as the CPU's attention computes it (gemma 2).
  float softcap = 0;
  // > 0: a query at position p sees (p - window, p] only, the CPU's
  // AttentionShape::first_seen (sliding-window layers).
  int32_t window = 0;
};

// A scaled score soft-capped as the CPU's soft_cap does: times 1 / cap,
// tanh, times cap, each product rounded on its own; unchanged without a cap.
#if defined(__CUDACC__)
__device__ inline float soft_capped(const AttentionShape& s, float score) {
  return s.softcap > 0 ? __fmul_rn(tanhf(__fmul_rn(score, 1.0f / s.softcap)), s.softcap) : score;
}
#endif

// The first position a query at `pos` sees under `s`'s window.
__host__ __device__ inline int32_t first_seen(const AttentionShape& s, int32_t pos) {
  return s.window > 0 && pos >= s.window ? pos - s.window + 1 : 0;
}
inline constexpr int32_t kMaxHeadDim = 256;

// A decoding sequence's one new token: flat row `row` at position `pos`;
// its block table starts at element `table` of the step's table array.
struct DecodeQuery {
  int32_t row, pos, table;
};

// A tile of a prefilling sequence's new tokens: rows [row, row + n) at
// positions [pos, pos + n), n <= kPrefillTileRows.
struct PrefillTile {
  int32_t row, n, pos, table;
};
inline constexpr int32_t kPrefillTileRows = 16;

}  // namespace kvgate::cuda
