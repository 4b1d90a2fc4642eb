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

#include "engine/llama_weights.h"

namespace kvgate {

// Rows at or above which matmul uses sgemm (tuned by `ops/bench engine`).
inline constexpr int64_t kSgemmMinRows = 16;

// y[t][r] = sum_c w[r][c] * x[t][c], for t < n_rows; x is [n_rows][w.cols],
// y is [n_rows][w.rows].
void matmul(const Matrix& w, const float* x, int64_t n_rows, float* y);

}  // namespace kvgate
