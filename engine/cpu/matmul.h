// y = x W^T for a batch of activation rows: the linear layers of the CPU
// backend, on one of two paths.
//
// Few rows (decode, alone or batched) take the register tiles of
// gemm_tile.h: each weight row is read once per call, in its stored type,
// for every activation row. Many rows (prefill) are compute-bound and go to
// OpenBLAS sgemm; non-f32 weights are widened a chunk of rows at a time
// first, which the many rows amortise. Where one path overtakes the other
// was measured, per weight type and instruction set (sgemm_min_rows).
#pragma once

#include <cstdint>
#include <span>

#include "engine/model/llama_weights.h"

namespace kvgate {

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

// Activation rows at or above which matmul takes sgemm for `type` weights.
int64_t sgemm_min_rows(TensorType type);

// The two paths themselves, for the crossover benchmark.
void matmul_tiled(std::span<const MatmulTarget> targets, const float* x, int64_t n_rows);
void matmul_sgemm(const Matrix& w, const float* x, int64_t n_rows, float* y);

}  // namespace kvgate
