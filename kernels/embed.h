// Embedding lookup: one row of the token embedding table per token, widened
// to f32 from its stored type (F32, F16, BF16 or a block type: a Q4_K_M
// file's table is Q4_K). The table stays in its stored type on the device:
// only the rows a step needs are decoded.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/weights_view.h"

namespace kvgate::cuda {

// out[t][0:dim] = row tokens[t] of `table` (rows `row_bytes` apart), for t < n.
// Each value times `scale` when it is not 1 (gemma's sqrt(dim)), one f32
// multiply after widening, as the CPU scales the widened row.
void embed_rows(WeightType type, const void* table, size_t row_bytes, const int32_t* tokens, int64_t n, int32_t dim,
                float* out, cudaStream_t stream, float scale = 1.0f);

}  // namespace kvgate::cuda
