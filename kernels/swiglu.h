// SwiGLU of the fused gate/up projection: act = silu(gate) * up, with the
// CPU's expression (engine/cpu/rowwise.h: g / (1 + exp(-g)) * up).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace kvgate::cuda {

// gate_up rows hold [gate | up], 2 * ffn floats; out rows hold ffn floats.
void swiglu_rows(const float* gate_up, int64_t n, int32_t ffn, float* out, cudaStream_t stream);

}  // namespace kvgate::cuda
