// Element type conversions on the device: activations narrowed to f16 or
// bf16 for the half-precision GEMMs (cuBLAS takes both inputs in one type),
// and stored weight rows widened to f32 (block-quantized matrices for a
// prefill's GEMM, and matrices fused with others of another type, which are
// kept as f32).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/weights_view.h"

namespace kvgate::cuda {

// dst[i] = x[i] rounded to nearest even, for i < n; `to` is kF16 or kBF16.
void narrow_f32(const float* x, int64_t n, WeightType to, void* dst, cudaStream_t stream);

// dst[r][0:cols] = the stored row r of src (rows row_bytes apart), for r < rows.
void widen_rows(WeightType type, const void* src, size_t row_bytes, int64_t rows, int64_t cols, float* dst,
                cudaStream_t stream);

}  // namespace kvgate::cuda
