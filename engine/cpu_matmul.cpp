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
  const bool widen_once = n > 1 && w.type != TensorType::F32;
#pragma omp parallel if (rows * cols * n >= kParallelMacs)
  {
    std::vector<float> row(widen_once ? static_cast<size_t>(cols) : 0);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      if (widen_once) {
        dequantize_row(w.type, w.row(r), row.data(), cols);
        for (int64_t t = 0; t < n; ++t) y[t * rows + r] = dot_f32(row.data(), x + t * cols, cols);
      } else {
        for (int64_t t = 0; t < n; ++t) y[t * rows + r] = dot_row(w.type, w.row(r), x + t * cols, cols);
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
