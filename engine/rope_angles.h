// RoPE's angles, tabulated once per model: the cosine and sine that pair i
// of a head turns by at position p. Both backends rotate by this one table
// (the CUDA backend uploads it), so they agree to the bit. Header-only: part
// of the Backend seam.
//
// The arithmetic is llama.cpp's, step for step, in f32: per position,
// theta starts at p and is multiplied by base^(-2/rope_dim) once per pair;
// pair i's angle is freq_scale * theta / factor[i], its cosine and sine
// times LongRoPE's attn_factor (1 elsewhere). A closed form
// (p * base^(-2i/rope_dim)) rounds differently, and after thousands of
// positions the difference reaches the logits.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/model_config.h"

namespace kvgate {

struct RopeAngles {
  int32_t half = 0;             // rope_dim / 2: pairs per head
  std::vector<float> cos, sin;  // [max_pos][half]
};

// The table of the model's global layers, or (sliding) of its
// sliding-window layers, which may have their own base and scale.
inline RopeAngles rope_angles(const ModelConfig& c, int32_t max_pos, bool sliding = false) {
  const float base = sliding ? c.rope_base_swa : c.rope_base;
  const float freq_scale = sliding ? c.rope_freq_scale_swa : c.rope_freq_scale;
  RopeAngles t;
  t.half = c.rope_dim / 2;
  t.cos.resize(static_cast<size_t>(max_pos) * static_cast<size_t>(t.half));
  t.sin.resize(t.cos.size());
  const float theta_scale = std::pow(base, -2.0f / static_cast<float>(c.rope_dim));
  const bool factors = !c.rope_freq_factors.empty();
  for (int32_t p = 0; p < max_pos; ++p) {
    float theta = static_cast<float>(p);
    for (int32_t i = 0; i < t.half; ++i) {
      const float angle = freq_scale * (factors ? theta / c.rope_freq_factors[static_cast<size_t>(i)] : theta);
      const size_t at = static_cast<size_t>(p) * static_cast<size_t>(t.half) + static_cast<size_t>(i);
      t.cos[at] = std::cos(angle) * c.rope_attn_factor;
      t.sin[at] = std::sin(angle) * c.rope_attn_factor;
      theta *= theta_scale;
    }
  }
  return t;
}

}  // namespace kvgate
