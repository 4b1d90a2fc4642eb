// exp(y) for y <= 0, the exponent of every softmax here ((logit - max) / T
// in sampling, score - max in attention), in AVX-512, AVX2 and scalar forms
// that give bit-identical results (the same IEEE operations in the same
// order), so a result never depends on where a row's tail falls, on the
// vector width or on libm.
//
// y = n ln2 + r with |r| <= ln2/2 (ln2 split in two so n ln2 is exact), e^r
// by its Taylor series to r^6 (relative error ~1e-7, float's own), times 2^n
// built in the exponent bits. Below -87, and for NaN, the result is 0: such
// a term is under 1e-37 of the largest one's.
#pragma once

#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>

namespace kvgate::cpu {

namespace exp_detail {
inline constexpr float kMin = -87.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kC[] = {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};
}  // namespace exp_detail

inline __m256 exp_nonpositive8(__m256 y) {
  using namespace exp_detail;
  const __m256 valid = _mm256_cmp_ps(y, _mm256_set1_ps(kMin), _CMP_GE_OQ);
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(y, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), y);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kC[0]);
  for (size_t i = 1; i < std::size(kC); ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC[i]));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(valid, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
}

#ifdef __AVX512F__
// Only in the translation units built for AVX-512 (engine/cpu/*_avx512.cpp).
inline __m512 exp_nonpositive16(__m512 y) {
  using namespace exp_detail;
  const __mmask16 valid = _mm512_cmp_ps_mask(y, _mm512_set1_ps(kMin), _CMP_GE_OQ);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(y, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), y);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kC[0]);
  for (size_t i = 1; i < std::size(kC); ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC[i]));
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(valid, p, _mm512_castsi512_ps(bits));
}
#endif

inline float exp_nonpositive1(float y) {
  using namespace exp_detail;
  if (!(y >= kMin)) return 0.0f;
  const float n = std::nearbyint(y * kLog2e);
  float r = std::fma(-n, kLn2Hi, y);
  r = std::fma(-n, kLn2Lo, r);
  float p = kC[0];
  for (size_t i = 1; i < std::size(kC); ++i) p = std::fma(p, r, kC[i]);
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

}  // namespace kvgate::cpu
