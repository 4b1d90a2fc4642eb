// The per-token pieces of a Llama layer on the CPU: RMSNorm, rotary position
// embedding, SwiGLU. Each acts on one activation row at a time.
#pragma once

#include <cstdint>
#include <vector>

namespace kvgate {

// out = x / sqrt(mean(x^2) + eps) * w
void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps);

// Rotates adjacent pairs (x[2i], x[2i+1]) of each head's first rope_dim
// values by pos * base^(-2i/rope_dim), llama.cpp's "normal" RoPE. Angles are
// tabulated once per position.
class RopeTable {
 public:
  RopeTable(int32_t max_pos, int32_t rope_dim, float base);
  // x holds n_heads heads of head_dim values.
  void apply(float* x, int32_t pos, int32_t n_heads, int32_t head_dim) const;

 private:
  int32_t half_;
  std::vector<float> cos_, sin_;  // [max_pos][rope_dim / 2]
};

// gate[i] = silu(gate[i]) * up[i]
void swiglu(float* gate, const float* up, int64_t n);

}  // namespace kvgate
