// y = x W^T for a batch of activation rows: the linear layers of the CPU
// backend, on one of three paths.
//
// Few rows (decode, alone or batched) take the register tiles of
// gemm_tile.h: each weight row is read once per call, in its stored type,
// for every activation row. Many rows (prefill, large decode batches) are
// compute-bound: where the CPU has AVX-512 they take the panel kernel of
// gemm_panel.h (activations packed once, weights read in place), else
// OpenBLAS sgemm, with non-f32 weights widened a chunk of rows at a time
// first. Where the many-rows path overtakes the tiles was measured, per
// weight type and instruction set (many_rows_min).
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

// Activation rows at or above which matmul leaves the register tiles for the
// many-rows path (panels on AVX-512, else sgemm) for `type` weights.
int64_t many_rows_min(TensorType type);

// The paths themselves, for the crossover benchmark and the tests
// (matmul_panels only where cpu_has_avx512()).
void matmul_tiled(std::span<const MatmulTarget> targets, const float* x, int64_t n_rows);
void matmul_panels(std::span<const MatmulTarget> targets, const float* x, int64_t n_rows);
void matmul_sgemm(const Matrix& w, const float* x, int64_t n_rows, float* y);

}  // namespace kvgate
