// Paged attention on the CPU: one token's query heads against every earlier
// position of its sequence, read through the block table. K/V are read in
// the pool's element type and widened to f32 as they are loaded; all the
// arithmetic is f32.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/batch.h"
#include "engine/cpu/kv_pool.h"

namespace kvgate {

struct AttentionShape {
  int32_t head_dim;
  int32_t group;       // query heads per KV head (GQA)
  float scale = 0;     // of the scores; 0: 1 / sqrt(head_dim)
  float softcap = 0;   // > 0: scores become softcap * tanh(score / softcap) (gemma 2)
  int32_t window = 0;  // > 0: a query at position p sees (p - window, p] only (sliding layers)

  float score_scale() const;
  // The first position a query at `pos` sees.
  int32_t first_seen(int32_t pos) const { return window > 0 && pos >= window ? pos - window + 1 : 0; }
};

// For the `group` query heads in q (contiguous, head_dim each) that share KV
// head `kv_head`, the last of positions [0, n_ctx): out = softmax(q K^T *
// scale, soft-capped) V over the positions it sees. `scores` is scratch,
// resized as needed.
void attend(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
            const AttentionShape& shape, const float* q, float* out, std::vector<float>& scores);

// Runs of at least this many tokens of one sequence use attend_rows (the
// gather of K/V included), shorter ones attend token by token: where the
// two cost the same on the 110M model (head_dim 64), 128 to 3,840 cached
// positions before the run (docs/benchmarks.md). 4 on the AVX-512 panels,
// 12 on sgemm.
int32_t attend_rows_min(int32_t head_dim);

// K and V of one KV head at positions [0, n_ctx) of one sequence, gathered
// out of their blocks into contiguous f32 (widened from the pool's type):
// the operands of attend_rows' matrix products. A sequence's prefill is
// gathered once per layer and KV head, however many chunks then read it.
// Where the CPU has AVX-512, K is gathered transposed, positions along its
// rows, so that the panel kernel (gemm_panel.h) reads it as it stands.
struct GatheredKv {
  int32_t n_ctx = 0;
  int64_t kt_ld = 0;        // kt's row length: n_ctx rounded up to whole panels, zero past n_ctx
  std::vector<float> k;     // [n_ctx][head_dim]; or, on AVX-512, K transposed: [head_dim][kt_ld]
  std::vector<float> v;     // [n_ctx][head_dim]
};
void gather_kv(const KvPool& kv, int32_t layer, std::span<const BlockId> table, int32_t n_ctx, int32_t kv_head,
               int32_t head_dim, GatheredKv& out);

// attend's math for a run of n consecutive tokens of one sequence, at
// positions [start_pos, start_pos + n) (kv covers them all), as matrix
// products over the group's heads together: scores = Q K^T, then a causal
// (and, with a window, sliding) softmax, then out = scores V, by the AVX-512 panel kernel where the CPU
// has it, else OpenBLAS sgemm. Row i of q and out holds token i's heads;
// consecutive rows are `row_stride` floats apart.
struct AttendRowsScratch {
  std::vector<float> q, scores, out, sums;
};
void attend_rows(const GatheredKv& kv, int32_t start_pos, int32_t n, const AttentionShape& shape, const float* q,
                 float* out, int64_t row_stride, AttendRowsScratch& scratch);

}  // namespace kvgate
