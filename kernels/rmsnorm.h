// RMSNorm of activation rows: out = x / sqrt(mean(x^2) + eps) * w, the same
// operation order as the CPU's rmsnorm (engine/cpu/rowwise.h). The rows read
// can be a gathered subset (`rows`), which is how the output head normalizes
// only the rows that want logits. The result is written in the type the
// next GEMM reads (gemm.h), so it needs no narrowing pass of its own.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/weights_view.h"

namespace kvgate::cuda {

// For r < n: out[r] = rmsnorm(x[rows ? rows[r] : r]) * w; x rows are `dim`
// floats, out rows `dim` values of out_type (f32, f16 or bf16).
void rmsnorm_rows(const float* x, const int32_t* rows, int64_t n, const float* w, int32_t dim, float eps, void* out,
                  WeightType out_type, cudaStream_t stream);

// gemma's post-norms: for r < n, x[r] += rmsnorm(h[r]) * w, both rows `dim`
// f32 wide; the CPU normalizes h in place, then adds it to the residual:
// the same roundings, in one pass.
void rmsnorm_add_rows(const float* h, int64_t n, const float* w, int32_t dim, float eps, float* x,
                      cudaStream_t stream);

}  // namespace kvgate::cuda
