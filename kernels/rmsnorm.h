// RMSNorm of activation rows: out = x / sqrt(mean(x^2) + eps) * w, the same
// operation order as the CPU's rmsnorm (engine/cpu/rowwise.h). The rows read
// can be a gathered subset (`rows`), which is how the output head normalizes
// only the rows that want logits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kvgate::cuda {

// For r < n: out[r] = rmsnorm(x[rows ? rows[r] : r]) * w; rows of `dim` floats.
void rmsnorm_rows(const float* x, const int32_t* rows, int64_t n, const float* w, int32_t dim, float eps, float* out,
                  cudaStream_t stream);

}  // namespace kvgate::cuda
