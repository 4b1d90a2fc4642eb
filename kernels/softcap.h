// Final-logit soft-capping (gemma 2 and 3): x <- cap * tanh(x / cap), as
// llama.cpp computes it and the CPU follows (engine/cpu/cpu_backend.cpp,
// head): tanh(x * (1 / cap)) * cap, the reciprocal taken once in f32. (The
// attention scores' soft-capping is inside the attention kernels:
// attention_batch.h.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kvgate::cuda {

// The first n values of x, in place; cap > 0.
void softcap_values(float* x, int64_t n, float cap, cudaStream_t stream);

}  // namespace kvgate::cuda
