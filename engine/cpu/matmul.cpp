#include "engine/cpu/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "engine/cpu/dot.h"
#include "engine/error.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

// Below this many multiply-adds a matmul runs on the calling thread: waking
// the OpenMP team costs more than it saves (tiny models, e.g. stories260K).
constexpr int64_t kParallelMacs = int64_t{1} << 16;

// Row pairs of several matrices that read the same activations, numbered
// across all of them, so one OpenMP region (one barrier) covers them all.
struct PairSpace {
  std::span<const MatmulTarget> targets;
  int64_t total = 0;
  int64_t first[4] = {};  // first global pair of each target

  explicit PairSpace(std::span<const MatmulTarget> t) : targets(t) {
    for (size_t i = 0; i < t.size(); ++i) {
      first[i] = total;
      total += (t[i].w->rows + 1) / 2;
    }
  }
  size_t target_of(int64_t pair) const {
    size_t i = 0;
    while (i + 1 < targets.size() && pair >= first[i + 1]) ++i;
    return i;
  }
};

void matmul_streaming(std::span<const MatmulTarget> targets, const float* x, int64_t n) {
  const int64_t cols = targets[0].w->cols;
  const PairSpace space(targets);
  int64_t macs = 0;
  bool widen_any = false;
  for (const MatmulTarget& t : targets) {
    macs += t.w->rows * cols * n;
    widen_any |= n > 1 && t.w->type != TensorType::F32 && t.w->type != TensorType::F16;
  }
#pragma omp parallel if (macs >= kParallelMacs)
  {
    std::vector<float> wide(widen_any ? static_cast<size_t>(2 * cols) : 0);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < space.total; ++p) {
      const size_t ti = space.target_of(p);
      const MatmulTarget& t = targets[ti];
      const Matrix& w = *t.w;
      const int64_t r0 = 2 * (p - space.first[ti]), r1 = std::min(r0 + 1, w.rows - 1);
      if (n == 1) {  // decode: memory-bound, one dot product per row
        t.y[r0] = dot_row(w.type, w.row(r0), x, cols);
        t.y[r1] = dot_row(w.type, w.row(r1), x, cols);
        continue;
      }
      // Several activation rows: 2 x 4 register tiles. F32 and F16 rows are
      // read in place; BF16 and Q8_0 rows are widened once into a buffer.
      const void* w0 = w.row(r0);
      const void* w1 = w.row(r1);
      TensorType tile_type = w.type;
      if (w.type != TensorType::F32 && w.type != TensorType::F16) {
        dequantize_row(w.type, w0, wide.data(), cols);
        dequantize_row(w.type, w1, wide.data() + cols, cols);
        w0 = wide.data();
        w1 = wide.data() + cols;
        tile_type = TensorType::F32;
      }
      for (int64_t t0 = 0; t0 < n; t0 += kTileCols) {
        const int nx = static_cast<int>(std::min<int64_t>(kTileCols, n - t0));
        const float* xs[kTileCols];
        for (int j = 0; j < nx; ++j) xs[j] = x + (t0 + j) * cols;
        float out[2][kTileCols];
        dot_tile_2x4(tile_type, w0, w1, xs, nx, cols, out);
        for (int j = 0; j < nx; ++j) {
          t.y[(t0 + j) * w.rows + r0] = out[0][j];
          t.y[(t0 + j) * w.rows + r1] = out[1][j];
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
  const MatmulTarget t{&w, y};
  matmul_many({&t, 1}, x, n_rows);
}

void matmul_many(std::span<const MatmulTarget> targets, const float* x, int64_t n_rows) {
  if (targets.size() > 4) throw Error("matmul_many: at most 4 matrices");
  for (const MatmulTarget& t : targets)
    if (t.w->cols != targets[0].w->cols) throw Error("matmul_many: matrices read different widths");
  if (n_rows >= kSgemmMinRows) {
    for (const MatmulTarget& t : targets) matmul_sgemm(*t.w, x, n_rows, t.y);
  } else {
    matmul_streaming(targets, x, n_rows);
  }
}

}  // namespace kvgate
