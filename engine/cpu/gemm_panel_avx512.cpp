// gemm_panel.h, compiled with -mavx512{f,bw,dq,vl,vnni} like
// gemm_tile_avx512.cpp and, like it, calling no inline library code (see
// tile_driver.h): the linker would keep this file's copy for every caller.
#include <immintrin.h>

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

}  // namespace

void pack_panel(const float* x, int64_t n, int64_t cols, float* panel) {
  for (int64_t t = 0; t < kP; ++t) {
    if (t < n) {
      const float* src = x + t * cols;
      for (int64_t c = 0; c < cols; ++c) panel[c * kP + t] = src[c];
    } else {
      for (int64_t c = 0; c < cols; ++c) panel[c * kP + t] = 0.0f;
    }
  }
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
