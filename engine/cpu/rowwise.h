// The per-token pieces of a Llama-kind layer on the CPU: RMSNorm, rotary
// position embedding, SwiGLU and GeGLU. Each acts on one activation row at a time.
#pragma once

#include <cstdint>

#include "engine/model_config.h"
#include "engine/rope_angles.h"

namespace kvgate {

// out = x / sqrt(mean(x^2) + eps) * w
void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps);

// Rotates the pairs of each head's first rope_dim values (adjacent or
// halves, as the model's RopeStyle says) by the angles of rope_angles.h,
// tabulated once for every position up to the context length.
class RopeTable {
 public:
  // The model's global layers' table, or (sliding) its sliding layers'.
  explicit RopeTable(const ModelConfig& c, bool sliding = false);
  // x holds n_heads heads of head_dim values.
  void apply(float* x, int32_t pos, int32_t n_heads, int32_t head_dim) const;

 private:
  RopeAngles angles_;
  RopeStyle style_;
};

// gate[i] = silu(gate[i]) * up[i]
void swiglu(float* gate, const float* up, int64_t n);

// gate[i] = gelu(gate[i]) * up[i], GELU's tanh form in f32:
// 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))), tanh as tanh_exp.h
// computes it. (llama.cpp's CPU path reads a table of GELU at x rounded to
// f16; this is the function itself.)
void geglu(float* gate, const float* up, int64_t n);

}  // namespace kvgate
