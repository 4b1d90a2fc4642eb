// Whole-block copies inside the KV pool: the prefix cache's copy-on-write
// (a request that must write into a shared block writes into a private
// copy). Many pairs go in one launch, as vLLM's copy_blocks does; each block
// is one contiguous run (kv_pool_geometry.h), copied 16 bytes at a time.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kvgate::cuda {

// For i < n: block pairs[2i + 1] <- block pairs[2i]. `pairs` is on the
// device; block_bytes a multiple of 16 (block_size x kv_dim x 2 x layers x
// element bytes is, for every model kvgate loads: kv_dim is a multiple of 8).
void copy_blocks(void* pool, size_t block_bytes, const int32_t* pairs, int32_t n, cudaStream_t stream);

}  // namespace kvgate::cuda
