// K/V store: each new token's rotated keys and its values into its slot of
// its sequence's block, converted to the pool's element type. A slot is
// named as block * block_size + slot (vLLM's slot mapping), computed on the
// host from the block table, so this kernel never looks at a table.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/kv_layout.h"
#include "kernels/kv_pool_geometry.h"

namespace kvgate::cuda {

// For r < n: layer `layer`'s K and V at slots[r] <- k[r * stride], v[r * stride] (kv_dim floats each).
// A negative slot is skipped: a padding row of a step replayed as a CUDA graph.
void kv_store(const KvPoolGeometry& g, KvType type, void* pool, int32_t layer, const float* k, const float* v,
              int64_t stride, const int64_t* slots, int64_t n, cudaStream_t stream);

}  // namespace kvgate::cuda
