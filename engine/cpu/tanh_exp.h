// tanh for gemma's GeGLU and soft-capping, from exp_nonpositive.h: with
// e = exp(-2|x|) <= 1, tanh(x) = sign(x) (1 - e) / (1 + e). Eight lanes and
// a scalar form that give the same bits, so a row's tail matches its body.
// libm's tanhf per element cost gemma prefill two thirds of its time; this
// is within 1e-7 of tanh absolutely (the relative error grows near 0,
// where 1 - e cancels, but GELU and soft-capping only add it to O(1)
// values).
#pragma once

#include <immintrin.h>

#include <cmath>

#include "engine/cpu/exp_nonpositive.h"

namespace kvgate::cpu {

inline __m256 tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
  const __m256 neg_abs = _mm256_or_ps(x, sign);  // -|x|
  const __m256 e = exp_nonpositive8(_mm256_add_ps(neg_abs, neg_abs));
  const __m256 t = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
  return _mm256_or_ps(t, _mm256_and_ps(x, sign));  // x's sign on a non-negative t
}

inline float tanh1(float x) {
  const float neg_abs = -std::fabs(x);
  const float e = exp_nonpositive1(neg_abs + neg_abs);
  return std::copysign((1.0f - e) / (1.0f + e), x);
}

}  // namespace kvgate::cpu
