#include "engine/cpu_matmul.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "engine/cpu_dot.h"
#include "engine/float_convert.h"

namespace kvgate {
namespace {

// Below this many multiply-adds a matmul runs on the calling thread: waking
// the OpenMP team costs more than it saves (tiny models, e.g. stories260K).
constexpr int64_t kParallelMacs = int64_t{1} << 16;

void matmul_streaming(const Matrix& w, const float* x, int64_t n, float* y) {
  const int64_t rows = w.rows, cols = w.cols;
  if (n == 1) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMacs)
    for (int64_t r = 0; r < rows; ++r) y[r] = dot_row(w.type, w.row(r), x, cols);
    return;
  }
  // Several activation rows: 2 x 4 register tiles. F32 and F16 rows are read
  // in place; BF16 and Q8_0 rows are widened once into a per-thread buffer.
  const bool widen = w.type != TensorType::F32 && w.type != TensorType::F16;
  const TensorType tile_type = widen ? TensorType::F32 : w.type;
  const int64_t pairs = (rows + 1) / 2;
#pragma omp parallel if (rows * cols * n >= kParallelMacs)
  {
    std::vector<float> wide(widen ? static_cast<size_t>(2 * cols) : 0);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < pairs; ++p) {
      const int64_t r0 = 2 * p, r1 = std::min(r0 + 1, rows - 1);
      const void* w0 = w.row(r0);
      const void* w1 = w.row(r1);
      if (widen) {
        dequantize_row(w.type, w0, wide.data(), cols);
        dequantize_row(w.type, w1, wide.data() + cols, cols);
        w0 = wide.data();
        w1 = wide.data() + cols;
      }
      for (int64_t t0 = 0; t0 < n; t0 += kTileCols) {
        const int nx = static_cast<int>(std::min<int64_t>(kTileCols, n - t0));
        const float* xs[kTileCols];
        for (int j = 0; j < nx; ++j) xs[j] = x + (t0 + j) * cols;
        float out[2][kTileCols];
        dot_tile_2x4(tile_type, w0, w1, xs, nx, cols, out);
        for (int j = 0; j < nx; ++j) {
          y[(t0 + j) * rows + r0] = out[0][j];
          y[(t0 + j) * rows + r1] = out[1][j];
        }
      }
    }
  }
}

void matmul_sgemm(const Matrix& w, const float* x, int64_t n, float* y) {
  const int64_t rows = w.rows, cols = w.cols;
  if (w.type == TensorType::F32) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(rows),
                static_cast<int>(cols), 1.0f, x, static_cast<int>(cols), reinterpret_cast<const float*>(w.data),
                static_cast<int>(cols), 0.0f, y, static_cast<int>(rows));
    return;
  }
  // Widen about 4 MiB of weights at a time: large enough for sgemm to run at
  // speed, small enough to stay in the last-level cache.
  const int64_t chunk = std::max<int64_t>(64, (int64_t{1} << 20) / cols);
  thread_local std::vector<float> wide;
  wide.resize(static_cast<size_t>(std::min(chunk, rows) * cols));
  float* buf = wide.data();  // the caller's buffer, shared by the OpenMP team below
  for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
    const int64_t nr = std::min(chunk, rows - r0);
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < nr; ++r) dequantize_row(w.type, w.row(r0 + r), buf + r * cols, cols);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(nr),
                static_cast<int>(cols), 1.0f, x, static_cast<int>(cols), buf, static_cast<int>(cols), 0.0f,
                y + r0, static_cast<int>(rows));
  }
}

}  // namespace

void matmul(const Matrix& w, const float* x, int64_t n_rows, float* y) {
  if (n_rows >= kSgemmMinRows)
    matmul_sgemm(w, x, n_rows, y);
  else
    matmul_streaming(w, x, n_rows, y);
}

}  // namespace kvgate
