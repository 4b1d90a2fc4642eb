// y = x W^T for a batch of activation rows: the linear layers of the CPU
// backend.
//
// Few rows (decode) stream each weight row once and dot it with every
// activation row: memory-bound, so weights are read in their stored type.
// Many rows (prefill) are compute-bound and go to OpenBLAS sgemm; non-f32
// weights are widened a chunk of rows at a time first, which the many rows
// amortise.
#pragma once

#include <cstdint>
#include <span>

#include "engine/model/llama_weights.h"

namespace kvgate {

// Rows at or above which matmul uses sgemm (tuned by `ops/bench engine`).
inline constexpr int64_t kSgemmMinRows = 16;

// y[t][r] = sum_c w[r][c] * x[t][c], for t < n_rows; x is [n_rows][w.cols],
// y is [n_rows][w.rows].
void matmul(const Matrix& w, const float* x, int64_t n_rows, float* y);

// Up to 4 matrices of the same input width applied to the same x (Q, K and V;
// gate and up). In decode this is one OpenMP region instead of one per
// matrix: every region ends in a barrier, and barriers are what a decode
// step of a small model spends its time in.
struct MatmulTarget {
  const Matrix* w;
  float* y;
};
void matmul_many(std::span<const MatmulTarget> targets, const float* x, int64_t n_rows);

}  // namespace kvgate
