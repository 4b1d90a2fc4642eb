// The AVX-512 kernel under matmul for many activation rows (prefill), in
// place of OpenBLAS sgemm where the CPU has AVX-512.
//
// sgemm packs the *weights* into panels on every call, and for a 128-token
// warm prefill that repacking is about a tenth of the work; OpenBLAS also
// picks its kernel from its own CPU table, which on a CPU newer than the
// library (or with OPENBLAS_CORETYPE set) can be the AVX2 one. Here the
// *activations* are packed instead: kPanelTokens rows interleaved column by
// column ([cols][kPanelTokens] floats), once per call and shared by every
// weight row. A register tile of 8 weight rows x kPanelTokens activation
// rows then runs over the columns: per column, 3 vector loads of the panel
// and 8 scalar broadcasts of the weights feed 24 FMAs. Weights are read in
// place, row by row; F16, BF16 and Q8_0 rows are widened 8 rows at a time
// into an L1/L2-resident buffer, which every panel of the call then reuses.
#pragma once

#include <cstdint>

#include "engine/model/llama_weights.h"

namespace kvgate {

// Activation rows per panel: three 16-float vectors.
inline constexpr int64_t kPanelTokens = 48;

// Packs rows [0, n) of x ([n][cols]; n <= kPanelTokens) into one panel,
// panel[c * kPanelTokens + t] = x[t][c], the rows past n zero.
void pack_panel(const float* x, int64_t n, int64_t cols, float* panel);

// dst[c * ld + i] <- rows[i][c] for i < 16 and c < cols (a multiple of
// 16), zero for i >= n: up to 16 rows written as 16 consecutive lanes of
// every column, the layout PanelSet reads. Attention gathers K transposed
// this way, one block of positions at a time. AVX-512 only.
void transpose_rows_avx512(const float* const* rows, int64_t n, int64_t cols, float* dst, int64_t ld);

// n activation rows x_t in panels: lane t's value in column c is
// data[(t / kPanelTokens) * step + c * ld + t % kPanelTokens]. Packed rows
// are step = cols * kPanelTokens, ld = kPanelTokens. A matrix that already
// holds its rows as columns needs no packing: attention's K transposed
// ([head_dim][positions]: step = kPanelTokens, ld = positions) and V
// ([positions][head_dim]: step = kPanelTokens, ld = head_dim). Every lane of
// the last panel is read, even past n (its products are not stored): the
// memory must be there and hold finite values.
struct PanelSet {
  const float* data;
  int64_t step, ld, n;
};

// Where dot product w_r . x_t goes: y[t * ldy + r] (a linear layer's
// [token][feature]) or y[r * ldy + t] (attention's [query][position]).
enum class PanelOutput { kByLane, kByRow };

// y <- w_r . x_t for weight rows r in [r0, r1) and every lane t < x.n.
// AVX-512 only: call where cpu_has_avx512().
void gemm_panels_avx512(const Matrix& w, int64_t r0, int64_t r1, const PanelSet& x, float* y, int64_t ldy,
                        PanelOutput out);

}  // namespace kvgate
