// The AVX-512 build of gemm_tile.h, compiled with -mavx512{f,bw,dq,vl,vnni}
// (see engine/cpu/CMakeLists.txt) and called only when cpu_has_avx512().
#include <immintrin.h>

// GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() (a self-initialised
// vector) as the pass-through of unmasked operations, which -O3 reports as
// maybe-uninitialized; the build treats warnings as errors.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif


#include "engine/cpu/gemm_tile.h"
#include "engine/cpu/tile_driver.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

// Up to 3 weight rows x 8 activation rows: 24 accumulators, 3 weight and 1
// activation register, 28 of the 32 zmm registers. Per 16 columns: 24 FMAs
// against 3 widening loads and 8 activation loads. (Batches of up to 4 use
// one weight row: see rows_for.)
constexpr int kTileRows = 3;
constexpr int kTileCols = 8;

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
inline float hsum(__m512 v) { return hsum(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1))); }

// 16 weights of a row from column i (a multiple of 16), widened to f32; `m`
// masks a row's tail. offset(i): where column i's bytes start in the row.
struct LoadF32 {
  static constexpr bool kWidens = false;  // block types reach it widened (tile_driver.h)
  static int64_t offset(int64_t i) { return i * 4; }
  static __m512 load(const void* row, int64_t i, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, static_cast<const float*>(row) + i);
  }
};
struct LoadF16 {
  static constexpr bool kWidens = false;
  static int64_t offset(int64_t i) { return i * 2; }
  static __m512 load(const void* row, int64_t i, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(row) + i));
  }
};
struct LoadBF16 {
  static constexpr bool kWidens = false;
  static int64_t offset(int64_t i) { return i * 2; }
  static __m512 load(const void* row, int64_t i, __mmask16 m) {
    const __m512i wide = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(row) + i));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
};

// Q8_0, widened in the register as F16 is: 16 int8 values (half of a
// block; Q8_0 rows are whole blocks, so never a tail) times the block's
// scale. The same single rounding as dequantize_row's d * q, so the products
// are those of the rows widened into memory, bit for bit, with 53% of F16's
// bytes read (34 per 32 weights) and nothing written.
struct LoadQ8 {
  static constexpr bool kWidens = true;
  static int64_t offset(int64_t i) { return i / kQ8_0Block * static_cast<int64_t>(sizeof(BlockQ8_0)) + i % kQ8_0Block; }
  static __m512 load(const void* row, int64_t i, __mmask16) {
    const BlockQ8_0& b = static_cast<const BlockQ8_0*>(row)[i / kQ8_0Block];
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.q + i % kQ8_0Block));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), _mm512_set1_ps(_cvtsh_ss(b.scale_f16)));
  }
};

// The 4- and 5-bit 32-value types, widened in the register the same way:
// the 16 values of half a block from its 16 bytes of nibbles (the low ones
// for values 0-15, the high for 16-31), the fifth bits of Q5_0 and Q5_1
// from the half's 16 bits of qh as a mask, then d * (q - zero), or
// q * d + m fused as dequantize_row fuses it: its values, bit for bit.
template <class Block, int kZero, bool kFifth, bool kOffset>
struct LoadNibbles {
  static constexpr bool kWidens = true;
  static int64_t offset(int64_t i) { return i / kQBlock * static_cast<int64_t>(sizeof(Block)) + i % kQBlock / 2; }
  static __m512 load(const void* row, int64_t i, __mmask16) {
    const Block& b = static_cast<const Block*>(row)[i / kQBlock];
    const bool high = i % kQBlock >= 16;
    __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)));
    if (high) q = _mm512_srli_epi32(q, 4);
    q = _mm512_and_si512(q, _mm512_set1_epi32(0xF));
    if constexpr (kFifth) {
      uint32_t qh;
      __builtin_memcpy(&qh, b.qh, 4);
      q = _mm512_mask_or_epi32(q, static_cast<__mmask16>(qh >> (high ? 16 : 0)), q, _mm512_set1_epi32(0x10));
    }
    const __m512 d = _mm512_set1_ps(_cvtsh_ss(b.d));
    if constexpr (kOffset) return _mm512_fmadd_ps(_mm512_cvtepi32_ps(q), d, _mm512_set1_ps(_cvtsh_ss(b.m)));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(q, _mm512_set1_epi32(kZero))), d);
  }
};
using LoadQ4_0 = LoadNibbles<BlockQ4_0, 8, false, false>;
using LoadQ4_1 = LoadNibbles<BlockQ4_1, 0, false, true>;
using LoadQ5_0 = LoadNibbles<BlockQ5_0, 16, true, false>;
using LoadQ5_1 = LoadNibbles<BlockQ5_1, 0, true, true>;

template <class L, int R, int C>
inline void step(const void* const* w, const float* const* x, int64_t i, __mmask16 m, __m512 (&acc)[R][C]) {
  __m512 wv[R];
  for (int r = 0; r < R; ++r) {
    wv[r] = L::load(w[r], i, m);
    _mm_prefetch(static_cast<const char*>(w[r]) + L::offset(i) + kPrefetchBytes, _MM_HINT_T0);
  }
  for (int j = 0; j < C; ++j) {
    __m512 xv = _mm512_maskz_loadu_ps(m, x[j] + i);
    // Keep xv in a register: folded into each FMA as a memory operand it is
    // loaded kTileRows times, and a 64-byte load is a full cycle of the load
    // ports on AMD's Zen 4, as long as the FMA it feeds.
    __asm__("" : "+v"(xv));
    for (int r = 0; r < R; ++r) acc[r][j] = _mm512_fmadd_ps(wv[r], xv, acc[r][j]);
  }
}

// R and C are template parameters so the accumulators stay in registers.
template <class L, int R, int C>
void tile(const void* const* w, const float* const* x, int64_t cols, float (&out)[R][kTileCols]) {
  __m512 acc[R][C];
  for (auto& row : acc)
    for (auto& a : row) a = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= cols; i += 16) step<L, R, C>(w, x, i, 0xFFFF, acc);
  if (i < cols) step<L, R, C>(w, x, i, static_cast<__mmask16>((1u << (cols - i)) - 1), acc);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) out[r][j] = hsum(acc[r][j]);
}

template <class L, int R>
void tile_n(int nc, const void* const* w, const float* const* x, int64_t cols, float (&out)[R][kTileCols]) {
  switch (nc) {
    case 1: return tile<L, R, 1>(w, x, cols, out);
    case 2: return tile<L, R, 2>(w, x, cols, out);
    case 3: return tile<L, R, 3>(w, x, cols, out);
    case 4: return tile<L, R, 4>(w, x, cols, out);
    case 5: return tile<L, R, 5>(w, x, cols, out);
    case 6: return tile<L, R, 6>(w, x, cols, out);
    case 7: return tile<L, R, 7>(w, x, cols, out);
    default: return tile<L, R, 8>(w, x, cols, out);
  }
}

template <class L, int R>
void rows(const Matrix& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y) {
  cpu::drive_tiles<R, kTileCols>(
      w, r0, r1, x, n, y, /*tile_widens=*/L::kWidens, [&](int nc, const void* const* wr, const float* const* xs, float (&out)[R][kTileCols]) {
        tile_n<L, R>(nc, wr, xs, w.cols, out);
      });
}

// R weight rows per tile: a batch of at most 4 reads one weight row at a
// time (its FMAs are few, and rows read side by side stream more slowly
// than one row); larger ones kTileRows.
template <class L>
void rows_for(const Matrix& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y) {
  if (n <= 4)
    rows<L, 1>(w, r0, r1, x, n, y);
  else
    rows<L, kTileRows>(w, r0, r1, x, n, y);
}

inline __m256i load_q8(const BlockQ8_0& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.q)); }

// 64 int8 products of |w| (unsigned) and x with w's sign (signed), summed
// four at a time into 16 int32 lanes: lanes 0-7 are the first 32-value
// block's, 8-15 the second's. x is in [-127, 127], so negating it fits.
inline __m512i dot_q8_pair(const BlockQ8_0& b0, const BlockQ8_0& b1, const int8_t* xq) {
  const __m512i w = _mm512_inserti64x4(_mm512_castsi256_si512(load_q8(b0)), load_q8(b1), 1);
  const __m512i x = _mm512_loadu_si512(xq);
  const __m512i sx = _mm512_mask_sub_epi8(x, _mm512_movepi8_mask(w), _mm512_setzero_si512(), x);
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_abs_epi8(w), sx);
}

// Both blocks' scales (weight's times activation's), each across its 8 lanes.
inline __m512 pair_scale(const BlockQ8_0& b0, const BlockQ8_0& b1, const float* xs) {
  return _mm512_insertf32x8(_mm512_set1_ps(_cvtsh_ss(b0.scale_f16) * xs[0]),
                            _mm256_set1_ps(_cvtsh_ss(b1.scale_f16) * xs[1]), 1);
}

// Four blocks' scales at once (the same products as pair_scale's), spread
// as two pairs: lanes 0-7 block 0, 8-15 block 1 in `first`; blocks 2 and 3
// in `second`.
inline void quad_scales(const BlockQ8_0* b, const float* xs, __m512& first, __m512& second) {
  const __m128i h = _mm_setr_epi16(static_cast<short>(b[0].scale_f16), static_cast<short>(b[1].scale_f16),
                                   static_cast<short>(b[2].scale_f16), static_cast<short>(b[3].scale_f16), 0, 0, 0, 0);
  const __m512 s = _mm512_castps128_ps512(_mm_mul_ps(_mm_cvtph_ps(h), _mm_loadu_ps(xs)));
  first = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1), s);
  second = _mm512_permutexvar_ps(_mm512_setr_epi32(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3), s);
}

}  // namespace

void gemv_q8_avx512(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y) {
  const int64_t blocks = w.cols / kQ8_0Block;
  const int8_t* xv = xq.q.data();
  const float* xs = xq.scale.data();
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const BlockQ8_0*>(w.row(r));
    // Two accumulators, four blocks a round: the FMA's latency is hidden.
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 4 <= blocks; b += 4) {
      // The 136 bytes of a later round's blocks (past the row's end, the
      // next rows': they follow it in memory).
      const char* ahead = reinterpret_cast<const char*>(row + b) + kPrefetchBytes;
      _mm_prefetch(ahead, _MM_HINT_T0);
      _mm_prefetch(ahead + 64, _MM_HINT_T0);
      _mm_prefetch(ahead + 128, _MM_HINT_T0);
      const __m512i d0 = dot_q8_pair(row[b], row[b + 1], xv + b * kQ8_0Block);
      const __m512i d1 = dot_q8_pair(row[b + 2], row[b + 3], xv + (b + 2) * kQ8_0Block);
      __m512 s01, s23;
      quad_scales(row + b, xs + b, s01, s23);
      acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), s01, acc0);
      acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), s23, acc1);
    }
    for (; b + 2 <= blocks; b += 2)
      acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_q8_pair(row[b], row[b + 1], xv + b * kQ8_0Block)),
                             pair_scale(row[b], row[b + 1], xs + b), acc0);
    float sum = hsum(_mm512_add_ps(acc0, acc1));
    if (b < blocks) {  // an odd last block, in 256-bit registers
      const __m256i wb = load_q8(row[b]);
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xv + b * kQ8_0Block));
      const __m256i sx = _mm256_mask_sub_epi8(x, _mm256_movepi8_mask(wb), _mm256_setzero_si256(), x);
      const __m256i d = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(wb), sx);
      sum += hsum(_mm256_cvtepi32_ps(d)) * _cvtsh_ss(row[b].scale_f16) * xs[b];
    }
    y[r] = sum;
  }
}

void gemm_rows_avx512(const Matrix& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y) {
  switch (w.type) {
    case TensorType::F32: return rows_for<LoadF32>(w, r0, r1, x, n, y);
    case TensorType::F16: return rows_for<LoadF16>(w, r0, r1, x, n, y);
    case TensorType::BF16: return rows_for<LoadBF16>(w, r0, r1, x, n, y);
    case TensorType::Q8_0: return rows_for<LoadQ8>(w, r0, r1, x, n, y);
    case TensorType::Q4_0: return rows_for<LoadQ4_0>(w, r0, r1, x, n, y);
    case TensorType::Q4_1: return rows_for<LoadQ4_1>(w, r0, r1, x, n, y);
    case TensorType::Q5_0: return rows_for<LoadQ5_0>(w, r0, r1, x, n, y);
    case TensorType::Q5_1: return rows_for<LoadQ5_1>(w, r0, r1, x, n, y);
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K: return rows_for<LoadF32>(w, r0, r1, x, n, y);  // widened first (tile_driver.h)
  }
}

}  // namespace kvgate
