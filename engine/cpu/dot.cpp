#include "engine/cpu/dot.h"

#include <immintrin.h>

#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Four independent accumulators hide the FMA latency; `load` widens 8 stored
// values at index i to f32, `scalar` one value (for the tail).
template <typename Load, typename Scalar>
inline float dot_widened(Load load, Scalar scalar, const float* x, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_fmadd_ps(load(i), _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(load(i + 8), _mm256_loadu_ps(x + i + 8), a1);
    a2 = _mm256_fmadd_ps(load(i + 16), _mm256_loadu_ps(x + i + 16), a2);
    a3 = _mm256_fmadd_ps(load(i + 24), _mm256_loadu_ps(x + i + 24), a3);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(load(i), _mm256_loadu_ps(x + i), a0);
  float s = hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < n; ++i) s += scalar(i) * x[i];
  return s;
}

float dot_f16(const uint16_t* w, const float* x, int64_t n) {
  return dot_widened(
      [w](int64_t i) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i))); },
      [w](int64_t i) { return f16_to_f32(w[i]); }, x, n);
}

float dot_bf16(const uint16_t* w, const float* x, int64_t n) {
  return dot_widened(
      [w](int64_t i) {
        __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
      },
      [w](int64_t i) { return bf16_to_f32(w[i]); }, x, n);
}

float dot_q8_0(const BlockQ8_0* w, const float* x, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / kQ8_0Block; ++b) {
    const float* xb = x + b * kQ8_0Block;
    __m256 s = _mm256_setzero_ps();
    for (int j = 0; j < kQ8_0Block; j += 8) {
      __m128i q8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w[b].q + j));
      __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8));
      s = _mm256_fmadd_ps(q, _mm256_loadu_ps(xb + j), s);
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16_to_f32(w[b].scale_f16)), s, acc);
  }
  return hsum(acc);
}

}  // namespace

float dot_f32(const float* w, const float* x, int64_t n) {
  return dot_widened([w](int64_t i) { return _mm256_loadu_ps(w + i); }, [w](int64_t i) { return w[i]; }, x, n);
}

float dot_row(TensorType type, const void* w, const float* x, int64_t n) {
  switch (type) {
    case TensorType::F32: return dot_f32(static_cast<const float*>(w), x, n);
    case TensorType::F16: return dot_f16(static_cast<const uint16_t*>(w), x, n);
    case TensorType::BF16: return dot_bf16(static_cast<const uint16_t*>(w), x, n);
    case TensorType::Q8_0: return dot_q8_0(static_cast<const BlockQ8_0*>(w), x, n);
  }
  return 0.0f;
}

}  // namespace kvgate
