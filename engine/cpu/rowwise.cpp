#include "engine/cpu/rowwise.h"

#include <immintrin.h>

#include <cmath>

#include "engine/cpu/exp_nonpositive.h"
#include "engine/cpu/tanh_exp.h"

namespace kvgate {

void rmsnorm(float* out, const float* x, const float* w, int64_t n, float eps) {
  float ss = 0.0f;
  for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = w[i] * (scale * x[i]);
}

RopeTable::RopeTable(const ModelConfig& c, bool sliding)
    : angles_(rope_angles(c, c.context_length, sliding)), style_(c.rope_style) {}

void RopeTable::apply(float* x, int32_t pos, int32_t n_heads, int32_t head_dim) const {
  const int32_t half = angles_.half;
  const float* c = angles_.cos.data() + static_cast<size_t>(pos) * half;
  const float* s = angles_.sin.data() + static_cast<size_t>(pos) * half;
  // Pair i is (v[i * step], v[i * step + gap]).
  const int32_t step = style_ == RopeStyle::kAdjacent ? 2 : 1;
  const int32_t gap = style_ == RopeStyle::kAdjacent ? 1 : half;
  for (int32_t h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int32_t i = 0; i < half; ++i) {
      float* first = v + i * step;
      const float a = first[0], b = first[gap];
      first[0] = a * c[i] - b * s[i];
      first[gap] = a * s[i] + b * c[i];
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

void geglu(float* gate, const float* up, int64_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f, kCoef = 0.044715f;
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), s2pi = _mm256_set1_ps(kSqrt2OverPi),
               coef = _mm256_set1_ps(kCoef);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(gate + i);
    // The scalar form's operations, in its order (no contraction into FMAs).
    const __m256 inner = _mm256_mul_ps(_mm256_mul_ps(s2pi, x), _mm256_add_ps(one, _mm256_mul_ps(_mm256_mul_ps(coef, x), x)));
    const __m256 g = _mm256_mul_ps(_mm256_mul_ps(half, x), _mm256_add_ps(one, cpu::tanh8(inner)));
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(g, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const float x = gate[i];
    gate[i] = 0.5f * x * (1.0f + cpu::tanh1(kSqrt2OverPi * x * (1.0f + kCoef * x * x))) * up[i];
  }
}

}  // namespace kvgate
