// The element types the CPU backend keeps keys and values in (f32, f16,
// bf16), and their conversion to and from the f32 the math runs in: eight at
// a time in AVX2 registers (F16C for f16), one at a time with the scalar
// conversions of engine/model/float_convert.h for a row's tail. Both forms
// round to nearest even and give the same bits, so where a row's tail falls
// never changes a stored value.
//
// f16 and bf16 are both 16-bit patterns; F16 and BF16 wrap them so that a
// kernel templated on its element type picks the right conversion by
// overload, and with_kv_element() turns the pool's run-time KvType into that
// template argument once per call rather than once per element.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "base/error.h"
#include "engine/kv_layout.h"
#include "engine/model/float_convert.h"

namespace kvgate::cpu {

struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};

template <typename E>
constexpr KvType kv_type_of();
template <>
constexpr KvType kv_type_of<float>() { return KvType::kF32; }
template <>
constexpr KvType kv_type_of<F16>() { return KvType::kF16; }
template <>
constexpr KvType kv_type_of<BF16>() { return KvType::kBF16; }

// Calls f(E{}) with E the element type of `t`.
template <typename F>
decltype(auto) with_kv_element(KvType t, F&& f) {
  switch (t) {
    case KvType::kF32: return f(float{});
    case KvType::kF16: return f(F16{});
    case KvType::kBF16: return f(BF16{});
  }
  throw Error("unknown KV element type");
}

// Eight stored values at p, widened to f32 (exact for every type).
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const F16* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline __m256 load8(const BF16* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
inline float load1(const float* p) { return *p; }
inline float load1(const F16* p) { return f16_to_f32(p->bits); }
inline float load1(const BF16* p) { return bf16_to_f32(p->bits); }

// Eight f32 values narrowed into p, rounded to nearest even.
inline void store8(float* p, __m256 x) { _mm256_storeu_ps(p, x); }
inline void store8(F16* p, __m256 x) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}
// f32_to_bf16 in lanes: add 0x7fff plus the lowest kept bit, keep the high
// half; a NaN is quieted instead (rounding could carry it into infinity).
inline void store8(BF16* p, __m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
  const __m256i high = _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, nan), 16);
  // Pack the eight 32-bit lanes (each < 2^16) to 16 bits: packus works per
  // 128-bit half, so gather the two halves' results into the low 128 bits.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(high, high), 0b1000);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
}
inline void store1(float* p, float x) { *p = x; }
inline void store1(F16* p, float x) { p->bits = f32_to_f16(x); }
inline void store1(BF16* p, float x) { p->bits = f32_to_bf16(x); }

// n values, f32 -> E and E -> f32.
template <typename E>
void narrow_row(const float* src, E* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) store8(dst + i, _mm256_loadu_ps(src + i));
  for (; i < n; ++i) store1(dst + i, src[i]);
}
template <typename E>
void widen_row(const E* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, load8(src + i));
  for (; i < n; ++i) dst[i] = load1(src + i);
}

}  // namespace kvgate::cpu
