// The AVX2 build of gemm_tile.h (the x86-64-v3 baseline), and the
// activation quantizer both builds share.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/cpu/cpu_features.h"
#include "engine/cpu/gemm_tile.h"
#include "engine/cpu/tile_driver.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

// 3 weight rows x 4 activation rows: 12 accumulators, 3 weight and 1
// activation register, all 16 ymm registers. Per 8 columns 12 FMAs against
// 3 widening loads and 4 activation loads; the 2 x 4 tile before it (8
// FMAs to 6 loads) ran a 24-row slab of the 110M model's rows at 29-63
// GFLOP/s on one Zen 4 core at batch 8, this one at 58-114 (F32, F16, Q8_0,
// Q4_K, alternating runs under load).
constexpr int kTileRows = 3;
constexpr int kTileCols = 4;

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// 8 weights of a row from column i widened to f32, and one (for the tail).
struct LoadF32 {
  static __m256 load(const void* row, int64_t i) { return _mm256_loadu_ps(static_cast<const float*>(row) + i); }
  static float one(const void* row, int64_t i) { return static_cast<const float*>(row)[i]; }
};
struct LoadF16 {
  static __m256 load(const void* row, int64_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)));
  }
  static float one(const void* row, int64_t i) { return f16_to_f32(static_cast<const uint16_t*>(row)[i]); }
};
struct LoadBF16 {
  static __m256 load(const void* row, int64_t i) {
    const __m256i wide = _mm256_cvtepu16_epi32(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + i)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float one(const void* row, int64_t i) { return bf16_to_f32(static_cast<const uint16_t*>(row)[i]); }
};

// C is a template parameter so the accumulators stay in registers.
template <class L, int C>
void tile(const void* const* w, const float* const* x, int64_t cols, float (&out)[kTileRows][kTileCols]) {
  __m256 acc[kTileRows][C];
  for (auto& row : acc)
    for (auto& a : row) a = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= cols; i += 8) {
    __m256 wv[kTileRows];
    for (int r = 0; r < kTileRows; ++r) wv[r] = L::load(w[r], i);
    for (int j = 0; j < C; ++j) {
      const __m256 xv = _mm256_loadu_ps(x[j] + i);
      for (int r = 0; r < kTileRows; ++r) acc[r][j] = _mm256_fmadd_ps(wv[r], xv, acc[r][j]);
    }
  }
  for (int r = 0; r < kTileRows; ++r)
    for (int j = 0; j < C; ++j) {
      float s = hsum(acc[r][j]);
      for (int64_t k = i; k < cols; ++k) s += L::one(w[r], k) * x[j][k];
      out[r][j] = s;
    }
}

template <class L>
void tile_n(int nc, const void* const* w, const float* const* x, int64_t cols, float (&out)[kTileRows][kTileCols]) {
  switch (nc) {
    case 1: return tile<L, 1>(w, x, cols, out);
    case 2: return tile<L, 2>(w, x, cols, out);
    case 3: return tile<L, 3>(w, x, cols, out);
    default: return tile<L, 4>(w, x, cols, out);
  }
}

// One weight row at a time against one activation row, with four
// independent accumulators to hide the FMA latency.
template <class L>
void gemv(const Matrix& w, int64_t r0, int64_t r1, const float* x, float* y) {
  const int64_t cols = w.cols;
  for (int64_t r = r0; r < r1; ++r) {
    const void* row = w.row(r);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 32 <= cols; i += 32)
      for (int u = 0; u < 4; ++u)
        acc[u] = _mm256_fmadd_ps(L::load(row, i + 8 * u), _mm256_loadu_ps(x + i + 8 * u), acc[u]);
    for (; i + 8 <= cols; i += 8) acc[0] = _mm256_fmadd_ps(L::load(row, i), _mm256_loadu_ps(x + i), acc[0]);
    float s = hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < cols; ++i) s += L::one(row, i) * x[i];
    y[r] = s;
  }
}

template <class L>
void rows(const Matrix& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y) {
  // Block-quantized rows, Q8_0 too, are widened into scratch first. Q8_0
  // widened in the tile's loads instead (as the AVX-512 build does), 8 lanes
  // at a time, the 110M model's layers ran no faster at 8 to 32 rows
  // (81-114 against 67-116 GFLOP/s, two runs on Zen 5 with
  // KVGATE_NO_AVX512=1) and slower from 96.
  cpu::drive_tiles<kTileRows, kTileCols>(
      w, r0, r1, x, n, y, /*tile_widens=*/false, [&](int nc, const void* const* wr, const float* const* xs, float (&out)[kTileRows][kTileCols]) {
        tile_n<L>(nc, wr, xs, w.cols, out);
      });
}

// |w| (unsigned) times x with w's sign (signed), in pairs into int16 (at
// most 2 x 127 x 127, no saturation), then in pairs into int32, scaled.
inline __m256 dot_block(const BlockQ8_0& b, const int8_t* xq, __m256 scale, __m256 acc) {
  const __m256i w8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.q));
  const __m256i x8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq));
  const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(w8, w8), _mm256_sign_epi8(x8, w8));
  const __m256i p32 = _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(p32), scale, acc);
}

}  // namespace

namespace cpu {
float* widen_scratch(int64_t floats) {
  thread_local std::vector<float> scratch;
  if (static_cast<int64_t>(scratch.size()) < floats) scratch.resize(static_cast<size_t>(floats));
  return scratch.data();
}
}  // namespace cpu

void gemm_rows_avx2(const Matrix& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y) {
  switch (w.type) {
    case TensorType::F16: return rows<LoadF16>(w, r0, r1, x, n, y);
    case TensorType::BF16: return rows<LoadBF16>(w, r0, r1, x, n, y);
    default: return rows<LoadF32>(w, r0, r1, x, n, y);  // F32, and the block types widened first
  }
}

namespace {
void sum_by_16(QuantizedRow& out) {
  out.sum16.resize(out.q.size() / 16);
  for (size_t g = 0; g < out.sum16.size(); ++g) {
    int sum = 0;
    for (size_t j = 0; j < 16; ++j) sum += out.q[16 * g + j];
    out.sum16[g] = static_cast<int16_t>(sum);
  }
}
}  // namespace

void quantize_row_q8(const float* x, int64_t cols, QuantizedRow& out) {
  const int64_t blocks = cols / kQ8_0Block;
  out.block = kQ8_0Block;
  out.q.resize(static_cast<size_t>(cols));
  out.scale.resize(static_cast<size_t>(blocks));
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t b = 0; b < blocks; ++b) {
    const float* xb = x + b * kQ8_0Block;
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(xb + 8 * i);
      amax = _mm256_max_ps(amax, _mm256_and_ps(v[i], abs_mask));
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    // 127, not 128: the sign trick in dot_block negates x, and -(-128) does not fit.
    const float d = _mm_cvtss_f32(m) / 127.0f, inv = d > 0.0f ? 1.0f / d : 0.0f;
    out.scale[b] = d;
    // Round to nearest even (the default MXCSR mode), then pack 32 int32 to
    // int8; the packs interleave 128-bit lanes, which the permute undoes.
    __m256i q[4];
    for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], _mm256_set1_ps(inv)));
    const __m256i q16 = _mm256_packs_epi32(q[0], q[1]), q16b = _mm256_packs_epi32(q[2], q[3]);
    const __m256i q8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(q16, q16b), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.q.data() + b * kQ8_0Block), q8);
  }
  sum_by_16(out);
}

void quantize_row_q8_k(const float* x, int64_t cols, QuantizedRow& out) {
  // As ggml's Q8_K: the scale maps the value of largest magnitude (the
  // first, on a tie) to -127 exactly, whatever its sign, and the others are
  // rounded to nearest even against the same reciprocal.
  out.block = kQKBlock;
  out.q.resize(static_cast<size_t>(cols));
  out.scale.resize(static_cast<size_t>(cols / kQKBlock));
  for (int64_t b = 0; b < cols / kQKBlock; ++b) {
    const float* xb = x + b * kQKBlock;
    int8_t* q = out.q.data() + b * kQKBlock;
    float amax = 0, max = 0;
    for (int64_t j = 0; j < kQKBlock; ++j)
      if (std::fabs(xb[j]) > amax) amax = std::fabs(xb[j]), max = xb[j];
    if (amax == 0) {
      out.scale[static_cast<size_t>(b)] = 0;
      std::fill(q, q + kQKBlock, int8_t{0});
      continue;
    }
    const float iscale = -127.0f / max;
    for (int64_t j = 0; j < kQKBlock; ++j)
      q[j] = static_cast<int8_t>(std::min(127, static_cast<int>(std::nearbyint(iscale * xb[j]))));
    out.scale[static_cast<size_t>(b)] = 1 / iscale;
  }
  sum_by_16(out);
}

void gemv_q8_avx2(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y) {
  const int64_t blocks = w.cols / kQ8_0Block;
  for (int64_t r = r0; r < r1; ++r) {
    const auto* row = reinterpret_cast<const BlockQ8_0*>(w.row(r));
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t b = 0;
    for (; b + 4 <= blocks; b += 4) {
      const char* ahead = reinterpret_cast<const char*>(row + b) + kPrefetchBytes;  // as in gemv_q8_avx512
      _mm_prefetch(ahead, _MM_HINT_T0);
      _mm_prefetch(ahead + 64, _MM_HINT_T0);
      _mm_prefetch(ahead + 128, _MM_HINT_T0);
      for (int u = 0; u < 4; ++u)
        acc[u] = dot_block(row[b + u], xq.q.data() + (b + u) * kQ8_0Block,
                           _mm256_set1_ps(_cvtsh_ss(row[b + u].scale_f16) * xq.scale[b + u]), acc[u]);
    }
    for (; b < blocks; ++b)
      acc[0] = dot_block(row[b], xq.q.data() + b * kQ8_0Block, _mm256_set1_ps(_cvtsh_ss(row[b].scale_f16) * xq.scale[b]),
                         acc[0]);
    y[r] = hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  }
}

void gemv_rows(const Matrix& w, int64_t r0, int64_t r1, const float* x, const QuantizedRow& xq, float* y) {
  switch (w.type) {
    case TensorType::F32: return gemv<LoadF32>(w, r0, r1, x, y);
    case TensorType::F16: return gemv<LoadF16>(w, r0, r1, x, y);
    case TensorType::BF16: return gemv<LoadBF16>(w, r0, r1, x, y);
    case TensorType::Q8_0: return cpu_has_avx512() ? gemv_q8_avx512(w, r0, r1, xq, y) : gemv_q8_avx2(w, r0, r1, xq, y);
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K: return gemv_blocks_avx2(w, r0, r1, xq, y);
  }
}

}  // namespace kvgate
