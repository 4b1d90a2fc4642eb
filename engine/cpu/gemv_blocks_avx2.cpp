// gemv_blocks_avx2 (gemm_tile.h): batch-1 dot products of block-quantized
// weight rows with an activation row quantized per 32, or per 256 for the
// k-quants (QuantizedRow).
//
// Every type reduces to the same step: 32 weights as unsigned bytes times
// 32 activation int8s, summed in pairs into int16 (vpmaddubsw; at most
// 2 x 63 x 127, no saturation) and in pairs again into int32 (vpmaddwd),
// whose 8 lanes are scaled by the block's d times x's scale. What the
// unsigned weights stand for is put back with x's sums: Q4_0's q - 8 is
// q . x - 8 sum(x); Q4_1's d q + m adds m sum(x) scaled by x's scale;
// Q4_K and Q5_K subtract dmin m sum(x) per sub-block. Q6_K's sub-blocks of
// 16 take their int8 scales in the vpmaddwd, and its q - 32 the same way.
#include <immintrin.h>

#include <cstring>

#include "engine/cpu/gemm_tile.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// 8 int32 lanes: sums of four products of w's unsigned bytes and x's int8s.
inline __m256i dot32(__m256i w, const int8_t* x) {
  const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w, xv), _mm256_set1_epi16(1));
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
  __builtin_memcpy(&bits, qh, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

inline int sum32(const QuantizedRow& xq, int64_t b) { return xq.sum16[2 * b] + xq.sum16[2 * b + 1]; }

// The 32-value types: acc gathers the scaled dot products, `offset` the
// terms of x's sums, both for the whole row.
template <class Block, class Row>
void rows_32(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y, Row row_fn) {
  const int64_t blocks = w.cols / kQBlock;
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const Block*>(w.row(r));
    __m256 acc = _mm256_setzero_ps();
    float offset = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      _mm_prefetch(reinterpret_cast<const char*>(row + b) + kPrefetchBytes, _MM_HINT_T0);
      row_fn(row[b], xq.q.data() + b * kQBlock, xq.scale[static_cast<size_t>(b)], sum32(xq, b), acc, offset);
    }
    y[r] = hsum(acc) + offset;
  }
}

// q . x less `zero` sum(x), in the int16 pairs before they widen: at most
// 2 x 31 x 127 + 2 x 16 x 127 in magnitude, no saturation.
inline __m256i dot32_centred(__m256i w, const int8_t* x, int zero) {
  const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(w, xv), _mm256_maddubs_epi16(_mm256_set1_epi8(static_cast<char>(zero)), xv));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

void q4_0(const BlockQ4_0& b, const int8_t* x, float xs, int, __m256& acc, float&) {
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot32_centred(nibbles(b.qs), x, 8)), _mm256_set1_ps(_cvtsh_ss(b.d) * xs), acc);
}
void q4_1(const BlockQ4_1& b, const int8_t* x, float xs, int xsum, __m256& acc, float& offset) {
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot32(nibbles(b.qs), x)), _mm256_set1_ps(_cvtsh_ss(b.d) * xs), acc);
  offset += _cvtsh_ss(b.m) * xs * static_cast<float>(xsum);
}
void q5_0(const BlockQ5_0& b, const int8_t* x, float xs, int, __m256& acc, float&) {
  const __m256i q = _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh));
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot32_centred(q, x, 16)), _mm256_set1_ps(_cvtsh_ss(b.d) * xs), acc);
}
void q5_1(const BlockQ5_1& b, const int8_t* x, float xs, int xsum, __m256& acc, float& offset) {
  const __m256i q = _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh));
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot32(q, x)), _mm256_set1_ps(_cvtsh_ss(b.d) * xs), acc);
  offset += _cvtsh_ss(b.m) * xs * static_cast<float>(xsum);
}

// The k-quants take x quantized per 256 (one scale a super-block), so a
// super-block's products add up in int32 lanes, each sub-block's weighted
// by its integer scale in the vpmaddwd that widens it, and turn into floats
// once per 256 values. The mins (Q4_K, Q5_K) and Q6_K's -32 are integer
// sums of x's per-16 sums against the sub-blocks' integers, likewise.

// Q4_K and Q5_K's 8 six-bit scales and 8 mins (k_scale_min), unpacked a
// word at a time: bytes 0-3 and 4-7 hold the first four of each in their
// low 6 bits and the top 2 bits of the last four, bytes 8-11 the last
// four's low nibbles.
struct KScales {
  alignas(16) uint8_t scale[8];
  alignas(16) uint8_t min[8];
};
inline KScales unpack_k_scales(const uint8_t* s) {
  uint32_t a[3];
  std::memcpy(a, s, 12);
  const uint32_t sc[2] = {a[0] & 0x3f3f3f3f, (a[2] & 0x0f0f0f0f) | ((a[0] >> 6) & 0x03030303) << 4};
  const uint32_t mn[2] = {a[1] & 0x3f3f3f3f, ((a[2] >> 4) & 0x0f0f0f0f) | ((a[1] >> 6) & 0x03030303) << 4};
  KScales k;
  std::memcpy(k.scale, sc, 8);
  std::memcpy(k.min, mn, 8);
  return k;
}

// Q4_K and Q5_K: per 64 values, 32 bytes of nibbles (sub-block 2k low,
// 2k + 1 high) and, for Q5_K, bits 2k and 2k + 1 of the 32 qh bytes. The
// mins' term is one vpmaddwd per super-block: each min, twice, against x's
// 16 per-16 sums.
template <class Block, bool kFifth>
void k_rows_4_5(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y) {
  const int64_t blocks = w.cols / kQKBlock;
  const __m256i low = _mm256_set1_epi8(0xF), one = _mm256_set1_epi8(1);
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const Block*>(w.row(r));
    __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
    for (int64_t i = 0; i < blocks; ++i) {
      const Block& b = row[i];
      _mm_prefetch(reinterpret_cast<const char*>(&b) + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(&b) + kPrefetchBytes + 64, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(&b) + kPrefetchBytes + 128, _MM_HINT_T0);
      const int8_t* x = xq.q.data() + i * kQKBlock;
      const KScales k = unpack_k_scales(b.scales);
      __m256i qh = _mm256_setzero_si256();
      if constexpr (kFifth) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qh));
      __m256i sum = _mm256_setzero_si256();
      for (int j = 0; j < 4; ++j) {
        const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 32 * j));
        __m256i lo = _mm256_and_si256(qs, low), hi = _mm256_and_si256(_mm256_srli_epi16(qs, 4), low);
        if constexpr (kFifth) {
          lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one), 4));
          hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one), 4));
        }
        const __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 * j)));
        const __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 * j + 32)));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(plo, _mm256_set1_epi16(k.scale[2 * j])));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(phi, _mm256_set1_epi16(k.scale[2 * j + 1])));
      }
      const __m128i m16 = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.min)));
      const __m256i mins = _mm256_set_m128i(_mm_unpackhi_epi16(m16, m16), _mm_unpacklo_epi16(m16, m16));
      const __m256i min_terms =
          _mm256_madd_epi16(mins, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq.sum16.data() + i * 16)));
      const float xs = xq.scale[static_cast<size_t>(i)];
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(_cvtsh_ss(b.d) * xs), acc);
      acc_min = _mm256_fmadd_ps(_mm256_cvtepi32_ps(min_terms), _mm256_set1_ps(_cvtsh_ss(b.dmin) * xs), acc_min);
    }
    y[r] = hsum(_mm256_sub_ps(acc, acc_min));
  }
}

// Q6_K: per 128 values, 64 bytes of ql and 32 of qh make four groups of 32
// (low nibbles of ql[0:32], of ql[32:64], high nibbles of each), each two
// sub-blocks of 16 with their own int8 scale.
void q6_k_rows(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y) {
  const int64_t blocks = w.cols / kQKBlock;
  const __m256i low = _mm256_set1_epi8(0xF), two = _mm256_set1_epi8(3);
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const BlockQ6_K*>(w.row(r));
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < blocks; ++i) {
      const BlockQ6_K& b = row[i];
      for (int p = 0; p < 4; ++p)
        _mm_prefetch(reinterpret_cast<const char*>(&b) + kPrefetchBytes + 64 * p, _MM_HINT_T0);
      const int8_t* x = xq.q.data() + i * kQKBlock;
      const int16_t* xsum = xq.sum16.data() + i * 16;
      // All 16 scales widened to int16 once: lanes 0-7 and 8-15 of `wide`.
      const __m256i wide = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)));
      __m256i sum = _mm256_setzero_si256();
      // The -32 of every value: 32 x sum over sub-blocks of scale x sum16.
      const __m256i offsets = _mm256_madd_epi16(wide, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xsum)));
      for (int half = 0; half < 2; ++half) {
        const uint8_t *ql = b.ql + 64 * half, *qhp = b.qh + 32 * half;
        const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
        const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
        const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp));
        const __m256i q[4] = {
            _mm256_or_si256(_mm256_and_si256(l0, low), _mm256_slli_epi16(_mm256_and_si256(qh, two), 4)),
            _mm256_or_si256(_mm256_and_si256(l1, low),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), two), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), two), 4)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), two), 4)),
        };
        for (int g = 0; g < 4; ++g) {
          const int s = 8 * half + 2 * g;
          const __m256i scales = _mm256_setr_m128i(_mm_set1_epi16(b.scales[s]), _mm_set1_epi16(b.scales[s + 1]));
          const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 128 * half + 32 * g));
          sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(q[g], xv), scales));
        }
      }
      sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(offsets, 5));
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(_cvtsh_ss(b.d) * xq.scale[static_cast<size_t>(i)]), acc);
    }
    y[r] = hsum(acc);
  }
}

}  // namespace

void gemv_blocks_avx2(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y) {
  switch (w.type) {
    case TensorType::Q4_0: return rows_32<BlockQ4_0>(w, r0, r1, xq, y, q4_0);
    case TensorType::Q4_1: return rows_32<BlockQ4_1>(w, r0, r1, xq, y, q4_1);
    case TensorType::Q5_0: return rows_32<BlockQ5_0>(w, r0, r1, xq, y, q5_0);
    case TensorType::Q5_1: return rows_32<BlockQ5_1>(w, r0, r1, xq, y, q5_1);
    case TensorType::Q4_K: return k_rows_4_5<BlockQ4_K, false>(w, r0, r1, xq, y);
    case TensorType::Q5_K: return k_rows_4_5<BlockQ5_K, true>(w, r0, r1, xq, y);
    case TensorType::Q6_K: return q6_k_rows(w, r0, r1, xq, y);
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
    case TensorType::Q8_0: break;  // gemv_rows' own loops
  }
}

}  // namespace kvgate
