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

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/model_config.h"

namespace kvgate {

// YaRN's correction range, llama.cpp's: the pairs [low, high] between
// which the angle moves from unscaled (fast pairs, at most beta_fast = 32
// turns over the original context) to scaled (slow pairs, at least
// beta_slow = 1 turn).
inline std::pair<float, float> yarn_corrected_pairs(int32_t rope_dim, int32_t original_context, float base) {
  auto pair_turning = [&](float turns) {
    return static_cast<float>(rope_dim) *
           std::log(static_cast<float>(original_context) / (turns * 2 * static_cast<float>(M_PI))) /
           (2 * std::log(base));
  };
  const float low = std::floor(pair_turning(32.0f)), high = std::ceil(pair_turning(1.0f));
  return {std::max(0.0f, low), std::min(static_cast<float>(rope_dim - 1), high)};
}

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
  const bool yarn = c.rope_yarn && !sliding;
  float magnitude = c.rope_attn_factor;
  std::vector<float> extrapolated;  // YaRN: how much of each pair keeps its unscaled angle
  if (yarn) {
    // llama.cpp's steps, rounding included: its context sets the factor
    // 1 + 0.1 ln(factor), cancels it again, then the kernel applies it.
    const float factor = 1.0f / freq_scale, grown = 0.1f * std::log(factor) + 1.0f;
    magnitude = grown * (1.0f / (1.0f + 0.1f * std::log(factor))) * c.rope_attn_factor;
    magnitude *= 1.0f + 0.1f * std::log(1.0f / freq_scale);
    const auto [low, high] = yarn_corrected_pairs(c.rope_dim, c.rope_yarn_original_context, base);
    for (int32_t i = 0; i < t.half; ++i) {
      const float y = (static_cast<float>(i) - low) / std::max(0.001f, high - low);
      extrapolated.push_back(1.0f - std::min(1.0f, std::max(0.0f, y)));
    }
  }
  for (int32_t p = 0; p < max_pos; ++p) {
    float theta = static_cast<float>(p);
    for (int32_t i = 0; i < t.half; ++i) {
      const float unscaled = factors ? theta / c.rope_freq_factors[static_cast<size_t>(i)] : theta;
      float angle = freq_scale * unscaled;
      if (yarn) {
        const float mix = extrapolated[static_cast<size_t>(i)];
        angle = angle * (1 - mix) + unscaled * mix;
      }
      const size_t at = static_cast<size_t>(p) * static_cast<size_t>(t.half) + static_cast<size_t>(i);
      t.cos[at] = std::cos(angle) * magnitude;
      t.sin[at] = std::sin(angle) * magnitude;
      theta *= theta_scale;
    }
  }
  return t;
}

}  // namespace kvgate
