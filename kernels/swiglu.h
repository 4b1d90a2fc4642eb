// SwiGLU (and GeGLU) of the fused gate/up projection: act = silu(gate) * up, with the
// CPU's expression (engine/cpu/rowwise.h: g / (1 + exp(-g)) * up), written
// in the type the down projection reads (gemm.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/weights_view.h"

namespace kvgate::cuda {

// gate_up rows hold [gate | up], 2 * ffn floats; out rows hold ffn values
// of out_type (f32, f16 or bf16).
void swiglu_rows(const float* gate_up, int64_t n, int32_t ffn, void* out, WeightType out_type, cudaStream_t stream);

// GeGLU (gemma), the same rows: act = gelu(gate) * up, GELU's tanh form in
// f32 with the CPU's expression (engine/cpu/rowwise.h:
// 0.5 g (1 + tanh(sqrt(2/pi) g (1 + 0.044715 g^2))) * up), IEEE tanhf, not
// llama.cpp's CPU table (docs/models.md, GELU).
void geglu_rows(const float* gate_up, int64_t n, int32_t ffn, void* out, WeightType out_type, cudaStream_t stream);

}  // namespace kvgate::cuda
