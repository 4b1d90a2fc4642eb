// attention_avx512.h, built with -mavx512{f,bw,dq,vl,vnni}. Like the other
// *_avx512.cpp files it calls no inline library code (see tile_driver.h).
#include "engine/cpu/attention_avx512.h"

#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's _mm512_max_ps and _mm512_reduce_*_ps start from _mm512_undefined_*()
// values, which it then reports as uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "engine/cpu/exp_nonpositive.h"

namespace kvgate {

float exp_shifted_avx512(float* s, int32_t n) {
  // The row's tail is a masked vector, so every element goes through the
  // same 16-lane code (the lanes past n read as -inf: exp 0, no max).
  const int32_t whole = n / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - whole)) - 1);
  const __m512 neg_inf = _mm512_set1_ps(-__builtin_inff());
  __m512 m = neg_inf;
  for (int32_t p = 0; p < whole; p += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(s + p));
  if (tail) m = _mm512_max_ps(m, _mm512_mask_loadu_ps(neg_inf, tail, s + whole));
  const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(m));
  __m512 acc = _mm512_setzero_ps();
  for (int32_t p = 0; p < whole; p += 16) {
    const __m512 e = cpu::exp_nonpositive16(_mm512_sub_ps(_mm512_loadu_ps(s + p), mx));
    _mm512_storeu_ps(s + p, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (tail) {
    const __m512 e = cpu::exp_nonpositive16(_mm512_sub_ps(_mm512_mask_loadu_ps(neg_inf, tail, s + whole), mx));
    _mm512_mask_storeu_ps(s + whole, tail, e);
    acc = _mm512_add_ps(acc, e);
  }
  return _mm512_reduce_add_ps(acc);
}

}  // namespace kvgate
