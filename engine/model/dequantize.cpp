#include "engine/model/dequantize.h"

#include <immintrin.h>

#include <cstring>

#include "base/error.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

// Each value is computed as ggml computes it (d * q, d * q + m,
// d1 * q - m1). With an f16 d, 6-bit scales and at most 6-bit q, every
// product but the last is exact in f32, and the last rounds once whether
// the build fuses it with the add or not: the bits are ggml's either way.
// The 32-value types and Q6_K are widened 8 lanes at a time (the scalar
// loops did not vectorize: 1.4 to 3.5 Gvalues/s against 15 for Q4_K,
// which the batched decode of a Q4_0 or Q6_K model then waited on).

// 32 int8 values (as they are stored in the register's lanes) times d.
inline void store_scaled(__m256i q, __m256 d, float* y) {
  const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
  _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), d));
  _mm256_storeu_ps(y + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), d));
  _mm256_storeu_ps(y + 16, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), d));
  _mm256_storeu_ps(y + 24, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), d));
}
// 32 values q * d + m (q unsigned, below 128).
inline void store_affine(__m256i q, __m256 d, __m256 m, float* y) {
  const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
  _mm256_storeu_ps(y, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), d, m));
  _mm256_storeu_ps(y + 8, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), d, m));
  _mm256_storeu_ps(y + 16, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), d, m));
  _mm256_storeu_ps(y + 24, _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), d, m));
}

// 16 bytes of nibbles as 32 values: the low nibbles (values 0-15), then the
// high ones (16-31).
inline __m256i nibbles(const uint8_t* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0xF);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

// 32 bits as 32 bytes, 0x10 where bit i of the little-endian qh is set.
inline __m256i fifth_bits(const uint8_t (&qh)[4]) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

void q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock)
    store_scaled(_mm256_sub_epi8(nibbles(b[i].qs), _mm256_set1_epi8(8)), _mm256_set1_ps(f16_to_f32(b[i].d)), y);
}

void q4_1(const BlockQ4_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock)
    store_affine(nibbles(b[i].qs), _mm256_set1_ps(f16_to_f32(b[i].d)), _mm256_set1_ps(f16_to_f32(b[i].m)), y);
}

void q5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock) {
    const __m256i q = _mm256_or_si256(nibbles(b[i].qs), fifth_bits(b[i].qh));
    store_scaled(_mm256_sub_epi8(q, _mm256_set1_epi8(16)), _mm256_set1_ps(f16_to_f32(b[i].d)), y);
  }
}

void q5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock) {
    const __m256i q = _mm256_or_si256(nibbles(b[i].qs), fifth_bits(b[i].qh));
    store_affine(q, _mm256_set1_ps(f16_to_f32(b[i].d)), _mm256_set1_ps(f16_to_f32(b[i].m)), y);
  }
}

void q8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQBlock)
    store_scaled(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].q)), _mm256_set1_ps(f16_to_f32(b[i].scale_f16)), y);
}

// Q4_K and Q5_K share their walk: 64 values at a time, two sub-blocks of
// 32 from the same 32 bytes of low bits (low nibbles, then high) and, for
// Q5_K, bits 2k and 2k + 1 of the 32 qh bytes.
template <class Block, bool kFifth>
void k_quant_4_5(const Block* b, float* y, int64_t nb) {
  const __m256i low = _mm256_set1_epi8(0xF), one = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d), dmin = f16_to_f32(b[i].dmin);
    __m256i qh = _mm256_setzero_si256();
    if constexpr (kFifth) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qh));
    for (int k = 0; k < 4; ++k, y += 64) {
      const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs + 32 * k));
      __m256i lo = _mm256_and_si256(qs, low), hi = _mm256_and_si256(_mm256_srli_epi16(qs, 4), low);
      if constexpr (kFifth) {
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * k), one), 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * k + 1), one), 4));
      }
      const KScaleMin a = k_scale_min(b[i].scales, 2 * k), c = k_scale_min(b[i].scales, 2 * k + 1);
      store_affine(lo, _mm256_set1_ps(d * a.scale), _mm256_set1_ps(-(dmin * a.min)), y);
      store_affine(hi, _mm256_set1_ps(d * c.scale), _mm256_set1_ps(-(dmin * c.min)), y + 32);
    }
  }
}

// Q6_K: per 128 values, 64 bytes of ql and 32 of qh make four groups of 32
// (the low nibbles of ql[0:32], of ql[32:64], then the high nibbles of
// each), each two sub-blocks of 16 with their own scale: d * sc, then * q.
void q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  const __m256i low = _mm256_set1_epi8(0xF), two = _mm256_set1_epi8(3), offset = _mm256_set1_epi8(32);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = f16_to_f32(b[i].d);
    for (int half = 0; half < 2; ++half, y += 128) {
      const uint8_t *ql = b[i].ql + 64 * half, *qhp = b[i].qh + 32 * half;
      const int8_t* sc = b[i].scales + 8 * half;
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp));
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, low), _mm256_slli_epi16(_mm256_and_si256(qh, two), 4)),
          _mm256_or_si256(_mm256_and_si256(l1, low), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), two), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), two), 4)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), two), 4)),
      };
      for (int g = 0; g < 4; ++g) {
        const __m256i v = _mm256_sub_epi8(q[g], offset);
        const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
        const __m256 d0 = _mm256_set1_ps(d * static_cast<float>(sc[2 * g]));
        const __m256 d1 = _mm256_set1_ps(d * static_cast<float>(sc[2 * g + 1]));
        float* out = y + 32 * g;
        _mm256_storeu_ps(out, _mm256_mul_ps(d0, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
        _mm256_storeu_ps(out + 8, _mm256_mul_ps(d0, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
        _mm256_storeu_ps(out + 16, _mm256_mul_ps(d1, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
        _mm256_storeu_ps(out + 24, _mm256_mul_ps(d1, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
      }
    }
  }
}

}  // namespace

void dequantize_blocks(TensorType type, const void* src, float* out, int64_t n) {
  switch (type) {
    case TensorType::Q4_0: return q4_0(static_cast<const BlockQ4_0*>(src), out, n / kQBlock);
    case TensorType::Q4_1: return q4_1(static_cast<const BlockQ4_1*>(src), out, n / kQBlock);
    case TensorType::Q5_0: return q5_0(static_cast<const BlockQ5_0*>(src), out, n / kQBlock);
    case TensorType::Q5_1: return q5_1(static_cast<const BlockQ5_1*>(src), out, n / kQBlock);
    case TensorType::Q8_0: return q8_0(static_cast<const BlockQ8_0*>(src), out, n / kQBlock);
    case TensorType::Q4_K: return k_quant_4_5<BlockQ4_K, false>(static_cast<const BlockQ4_K*>(src), out, n / kQKBlock);
    case TensorType::Q5_K: return k_quant_4_5<BlockQ5_K, true>(static_cast<const BlockQ5_K*>(src), out, n / kQKBlock);
    case TensorType::Q6_K: return q6_k(static_cast<const BlockQ6_K*>(src), out, n / kQKBlock);
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16: break;
  }
  throw Error("dequantize_blocks: " + std::string(ggml_type_name(static_cast<uint32_t>(type))) +
              " is not a block-quantized type");
}

}  // namespace kvgate
