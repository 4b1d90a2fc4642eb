#include "engine/cpu/matmul.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <vector>

#include "engine/cpu/cpu_features.h"
#include "engine/cpu/gemm_panel.h"
#include "engine/cpu/gemm_tile.h"
#include "engine/cpu/work_split.h"
#include "base/error.h"
#include "engine/model/float_convert.h"

namespace kvgate {
namespace {

// Below this many multiply-adds a matmul runs on the calling thread: waking
// the OpenMP team costs more than it saves (tiny models, e.g. stories260K).
constexpr int64_t kParallelMacs = int64_t{1} << 16;

// Weight rows per work item: a multiple of both builds' tile heights (3 and
// 3), and few enough items per matrix to spread over the cores.
constexpr int64_t kItemRows = 24;
// Activation rows per block of a long batch (64 rows of 2,048 f32: 512 KiB).
constexpr int64_t kBlockRows = 64;

// Row ranges of several matrices that read the same activations, numbered
// across all of them, so one OpenMP region (one barrier) covers them all.
struct ItemSpace {
  std::span<const MatmulTarget> targets;
  int64_t total = 0;
  int64_t first[4] = {};  // first global item of each target

  explicit ItemSpace(std::span<const MatmulTarget> t) : targets(t) {
    for (size_t i = 0; i < t.size(); ++i) {
      first[i] = total;
      total += (t[i].w->rows + kItemRows - 1) / kItemRows;
    }
  }
  // Item `item`'s matrix and output, and its weight rows [r0, r1).
  struct Rows {
    const MatmulTarget& target;
    int64_t r0, r1;
  };
  Rows rows_of(int64_t item) const {
    size_t i = 0;
    while (i + 1 < targets.size() && item >= first[i + 1]) ++i;
    const int64_t r0 = (item - first[i]) * kItemRows;
    return {targets[i], r0, std::min(r0 + kItemRows, targets[i].w->rows)};
  }
};

// The batched kernel of this CPU's widest instruction set.
decltype(&gemm_rows_avx2) gemm_rows() {
  static const auto k = cpu_has_avx512() ? gemm_rows_avx512 : gemm_rows_avx2;
  return k;
}

}  // namespace

void matmul_tiled(std::span<const MatmulTarget> targets, const float* x, int64_t n) {
  const auto tiles = gemm_rows();
  const ItemSpace space(targets);
  int64_t macs = 0;
  bool per_32 = false, per_256 = false;
  for (const MatmulTarget& t : targets) {
    macs += t.w->rows * t.w->cols * n;
    (takes_q8_k(t.w->type) ? per_256 : per_32) |= is_block_quantized(t.w->type);
  }
  // A decode row against block-quantized weights is quantized once, for
  // every matrix, in each way they take it. The caller's buffers: a
  // thread_local named inside the region below would be each team thread's own.
  thread_local QuantizedRow quantized_32, quantized_256;
  QuantizedRow &xq = quantized_32, &xk = quantized_256;
  if (n == 1 && per_32) quantize_row_q8(x, targets[0].w->cols, xq);
  if (n == 1 && per_256) quantize_row_q8_k(x, targets[0].w->cols, xk);
  // Many activation rows go kBlockRows at a time, so the block stays in
  // the core's L2 while every weight row passes over it.
  const int64_t cols = targets[0].w->cols;
  const int64_t row_blocks = (n + kBlockRows - 1) / kBlockRows;
  // The caller's, shared by the team below.
  thread_local cpu::WorkSplit split;
  cpu::WorkSplit& work = split;
  const bool parallel = macs >= kParallelMacs;
  work.reset(row_blocks * space.total, parallel ? omp_get_max_threads() : 1);
#pragma omp parallel if (parallel)
  work.run([&](int64_t i) {
    const int64_t b = i / space.total;
    const auto [t, r0, r1] = space.rows_of(i % space.total);
    const int64_t t0 = b * kBlockRows, nb = std::min(kBlockRows, n - t0);
    if (n == 1)
      gemv_rows(*t.w, r0, r1, x, takes_q8_k(t.w->type) ? xk : xq, t.y);
    else
      tiles(*t.w, r0, r1, x + t0 * cols, nb, t.y + t0 * t.w->rows);
  });
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

void matmul_panels(std::span<const MatmulTarget> targets, const float* x, int64_t n) {
  const ItemSpace space(targets);
  const int64_t cols = targets[0].w->cols;
  // Activation rows go in passes of at most about 768 KiB of panels (so they
  // stay in or near each core's L2 while every weight row passes over them),
  // split evenly: 290 rows are two passes of 144 or so, not 240 + 50.
  const int64_t per_pass = std::max<int64_t>(1, (int64_t{768} << 10) / (cols * 4 * kPanelTokens));
  const int64_t n_panels = (n + kPanelTokens - 1) / kPanelTokens;
  const int64_t n_passes = (n_panels + per_pass - 1) / per_pass;
  const int64_t pass = (n_panels + n_passes - 1) / n_passes * kPanelTokens;
  // 64-byte aligned, so no panel vector straddles two cache lines. The
  // caller's buffer, shared by the OpenMP team below.
  thread_local std::vector<float> storage;
  storage.resize(static_cast<size_t>(pass * cols + 16));
  float* panels = storage.data() + (16 - reinterpret_cast<uintptr_t>(storage.data()) / 4 % 16) % 16;
  int64_t macs = 0;
  for (const MatmulTarget& t : targets) macs += t.w->rows * cols * n;
  thread_local cpu::WorkSplit split;  // the caller's, shared by the team below
  cpu::WorkSplit& work = split;
#pragma omp parallel if (macs >= kParallelMacs)
  for (int64_t m0 = 0; m0 < n; m0 += pass) {
    const int64_t nm = std::min(pass, n - m0), np = (nm + kPanelTokens - 1) / kPanelTokens;
#pragma omp single
    work.reset(space.total, omp_get_num_threads());
#pragma omp for schedule(static)
    for (int64_t p = 0; p < np; ++p)
      pack_panel(x + (m0 + p * kPanelTokens) * cols, std::min(kPanelTokens, nm - p * kPanelTokens), cols,
                 panels + p * cols * kPanelTokens);
    work.run([&](int64_t item) {
      const auto [t, r0, r1] = space.rows_of(item);
      const PanelSet xs{panels, cols * kPanelTokens, kPanelTokens, nm};
      gemm_panels_avx512(*t.w, r0, r1, xs, t.y + m0 * t.w->rows, t.w->rows, PanelOutput::kByLane);
    });
    // The next pass packs over these panels.
#pragma omp barrier
  }
}

void matmul(const Matrix& w, const float* x, int64_t n_rows, float* y) {
  const MatmulTarget t{&w, y};
  matmul_many({&t, 1}, x, n_rows);
}

void matmul_many(std::span<const MatmulTarget> targets, const float* x, int64_t n_rows) {
  if (targets.size() > 4) throw Error("matmul_many: at most 4 matrices");
  for (const MatmulTarget& t : targets)
    if (t.w->cols != targets[0].w->cols) throw Error("matmul_many: matrices read different widths");
  if (n_rows < many_rows_min(targets[0].w->type)) {
    matmul_tiled(targets, x, n_rows);
  } else if (cpu_has_avx512()) {
    matmul_panels(targets, x, n_rows);
  } else {
    for (const MatmulTarget& t : targets) matmul_sgemm(*t.w, x, n_rows, t.y);
  }
}

int64_t many_rows_min(TensorType type) {
  // Where the many-rows path caught up with the tiles on the 110M model's
  // linear layers, 2 threads (docs/benchmarks.md, "crossover"). The AVX-512
  // panels (Zen 5, 2026-12-05): f32 from 16 rows (126 against 106 GFLOP/s);
  // F16, BF16 and Q8_0 from 48 (F16 156 / 143; the tile widens them in
  // registers, so at 32 and 40 rows it is 9-13% faster than the panels for
  // Q8_0, which the panels widen into memory first).
  // Without AVX-512, sgemm overtook the AVX2 2x4 tile at 16 (Zen 4,
  // KVGATE_NO_AVX512=1; not measured again for the 3x4 tile that replaced
  // it). Zen 4's half-rate AVX-512 has not been measured against the panels:
  // its crossovers may differ. The other quantized types take Q8_0's 48
  // unmeasured (the 32-value ones widen in the AVX-512 tile's registers as
  // Q8_0 does; the k-quants into memory, as the panels do, so their
  // crossover is likely earlier).
  if (!cpu_has_avx512()) return 16;
  return type == TensorType::F32 ? 16 : 48;
}

}  // namespace kvgate
