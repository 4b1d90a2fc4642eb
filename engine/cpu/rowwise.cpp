#include "engine/cpu/rowwise.h"

#include <immintrin.h>

#include <cmath>

#include "engine/cpu/exp_nonpositive.h"

namespace kvgate {

void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps) {
  float ss = 0.0f;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = w[i] * (scale * x[i]);
}

RopeTable::RopeTable(int32_t max_pos, int32_t rope_dim, float base) : half_(rope_dim / 2) {
  cos_.resize(static_cast<size_t>(max_pos) * half_);
  sin_.resize(cos_.size());
  for (int32_t p = 0; p < max_pos; ++p)
    for (int32_t i = 0; i < half_; ++i) {
      // f32 arithmetic, as the reference implementations do, so greedy
      // outputs match theirs to the bit where it matters.
      const float freq = 1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(rope_dim));
      const float angle = static_cast<float>(p) * freq;
      cos_[static_cast<size_t>(p) * half_ + i] = std::cos(angle);
      sin_[static_cast<size_t>(p) * half_ + i] = std::sin(angle);
    }
}

void RopeTable::apply(float* x, int32_t pos, int32_t n_heads, int32_t head_dim) const {
  const float* c = cos_.data() + static_cast<size_t>(pos) * half_;
  const float* s = sin_.data() + static_cast<size_t>(pos) * half_;
  for (int32_t h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int32_t i = 0; i < half_; ++i) {
      const float a = v[2 * i], b = v[2 * i + 1];
      v[2 * i] = a * c[i] - b * s[i];
      v[2 * i + 1] = a * s[i] + b * c[i];
    }
  }
}

// silu(g) = g sigmoid(g), the sigmoid from e = exp(-|g|) <= 1, which never
// overflows: 1 / (1 + e) for g >= 0, e / (1 + e) below. Eight at a time,
// the tail by the scalar form of the same operations (exp_nonpositive.h),
// so a value's result does not depend on where the row's tail falls.
void swiglu(float* gate, const float* up, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = cpu::exp_nonpositive8(_mm256_or_ps(g, sign));
    const __m256 sigmoid = _mm256_div_ps(_mm256_blendv_ps(one, e, g), _mm256_add_ps(one, e));  // g's sign picks e
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(_mm256_mul_ps(g, sigmoid), _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const float g = gate[i], e = cpu::exp_nonpositive1(-std::fabs(g));
    const float sigmoid = (std::signbit(g) ? e : 1.0f) / (1.0f + e);
    gate[i] = g * sigmoid * up[i];
  }
}

}  // namespace kvgate
