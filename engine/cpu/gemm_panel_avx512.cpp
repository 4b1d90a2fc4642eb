// gemm_panel.h, compiled with -mavx512{f,bw,dq,vl,vnni} like
// gemm_tile_avx512.cpp and, like it, calling no inline library code (see
// tile_driver.h): the linker would keep this file's copy for every caller.
#include <immintrin.h>

#include <cassert>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in gemm_tile_avx512.cpp
#endif

#include "engine/cpu/gemm_panel.h"
#include "engine/cpu/tile_driver.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

// Weight rows per register tile. 8 rows x 3 vectors is 24 accumulators and
// 3 panel vectors of the 32 zmm registers, and 8 row pointers fit the
// general registers beside the loop's own.
constexpr int kRows = 8;
constexpr int64_t kP = kPanelTokens;

// out[r][t] = w[r] . x_t for the V x 16 activation rows of one panel.
template <int V>
inline void panel_tile(const float* const* w, const float* panel, int64_t ld, int64_t cols,
                       float (&out)[kRows][kP]) {
  __m512 acc[kRows][V];
  for (auto& row : acc)
    for (auto& a : row) a = _mm512_setzero_ps();
  const float *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3], *w4 = w[4], *w5 = w[5], *w6 = w[6], *w7 = w[7];
  for (int64_t c = 0; c < cols; ++c) {
    const float* p = panel + c * ld;
    __m512 xv[V];
    for (int v = 0; v < V; ++v) xv[v] = _mm512_loadu_ps(p + 16 * v);
    const float wc[kRows] = {w0[c], w1[c], w2[c], w3[c], w4[c], w5[c], w6[c], w7[c]};
    for (int r = 0; r < kRows; ++r) {
      const __m512 b = _mm512_set1_ps(wc[r]);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(b, xv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int v = 0; v < V; ++v) _mm512_storeu_ps(&out[r][16 * v], acc[r][v]);
}

// r[i] <- column i of the 16 x 16 block whose row i was r[i].
inline void transpose16(__m512 (&r)[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {  // pairs of rows, interleaved within 128-bit lanes
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int g = 0; g < 16; g += 4) {  // u[g + k], lane m: rows g..g+3 of column k + 4m
    const __m512d a = _mm512_castps_pd(t[g]), b = _mm512_castps_pd(t[g + 1]);
    const __m512d c = _mm512_castps_pd(t[g + 2]), d = _mm512_castps_pd(t[g + 3]);
    u[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int k = 0; k < 4; ++k) {  // gather lane m of the four row groups
    const __m512 even_lo = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88);
    const __m512 even_hi = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88);
    const __m512 odd_lo = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xDD);
    const __m512 odd_hi = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xDD);
    r[k] = _mm512_shuffle_f32x4(even_lo, even_hi, 0x88);
    r[k + 8] = _mm512_shuffle_f32x4(even_lo, even_hi, 0xDD);
    r[k + 4] = _mm512_shuffle_f32x4(odd_lo, odd_hi, 0x88);
    r[k + 12] = _mm512_shuffle_f32x4(odd_lo, odd_hi, 0xDD);
  }
}

}  // namespace

void transpose_rows_avx512(const float* const* rows, int64_t n, int64_t cols, float* dst, int64_t ld) {
  assert(n <= 16 && cols % 16 == 0);
  for (int64_t c = 0; c < cols; c += 16) {
    __m512 r[16];
    for (int i = 0; i < 16; ++i) r[i] = i < n ? _mm512_loadu_ps(rows[i] + c) : _mm512_setzero_ps();
    transpose16(r);
    for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + (c + i) * ld, r[i]);
  }
}

void pack_panel(const float* x, int64_t n, int64_t cols, float* panel) {
  // The whole 16-column groups 16 rows at a time, transposed in registers;
  // the columns past them one by one.
  const int64_t whole = cols / 16 * 16;
  for (int64_t t0 = 0; t0 < kP; t0 += 16) {
    const int64_t rows_here = n - t0 < 0 ? 0 : n - t0 > 16 ? 16 : n - t0;
    const float* rows[16];
    for (int64_t i = 0; i < rows_here; ++i) rows[i] = x + (t0 + i) * cols;
    transpose_rows_avx512(rows, rows_here, whole, panel + t0, kP);
  }
  for (int64_t c = whole; c < cols; ++c)
    for (int64_t t = 0; t < kP; ++t) panel[c * kP + t] = t < n ? x[t * cols + c] : 0.0f;
}

void gemm_panels_avx512(const Matrix& w, int64_t r0, int64_t r1, const PanelSet& x, float* y, int64_t ldy,
                        PanelOutput output) {
  const int64_t cols = w.cols, n = x.n;
  const int64_t n_panels = (n + kP - 1) / kP;
  float* wide = w.type == TensorType::F32 ? nullptr : cpu::widen_scratch(kRows * cols);
  for (int64_t r = r0; r < r1; r += kRows) {
    const int nr = r1 - r < kRows ? static_cast<int>(r1 - r) : kRows;
    // A short last tile repeats its last row rather than reading past r1.
    const float* wr[kRows];
    for (int k = 0; k < kRows; ++k) {
      const int src = k < nr ? k : nr - 1;
      if (wide) {
        if (k < nr) dequantize_row(w.type, w.row(r + k), wide + k * cols, cols);
        wr[k] = wide + src * cols;
      } else {
        wr[k] = reinterpret_cast<const float*>(w.row(r + src));
      }
    }
    for (int64_t p = 0; p < n_panels; ++p) {
      const int64_t t0 = p * kP, nt = n - t0 < kP ? n - t0 : kP;
      const float* panel = x.data + p * x.step;
      float out[kRows][kP];
      if (nt > 32)
        panel_tile<3>(wr, panel, x.ld, cols, out);
      else if (nt > 16)
        panel_tile<2>(wr, panel, x.ld, cols, out);
      else
        panel_tile<1>(wr, panel, x.ld, cols, out);
      if (output == PanelOutput::kByLane) {
        for (int64_t t = 0; t < nt; ++t) {
          float* dst = y + (t0 + t) * ldy + r;
          for (int k = 0; k < nr; ++k) dst[k] = out[k][t];
        }
      } else {
        for (int k = 0; k < nr; ++k) {
          float* dst = y + (r + k) * ldy + t0;
          for (int64_t t = 0; t < nt; ++t) dst[t] = out[k][t];
        }
      }
    }
  }
}

}  // namespace kvgate
