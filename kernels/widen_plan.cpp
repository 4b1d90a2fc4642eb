#include "kernels/widen_plan.h"

#include <algorithm>

namespace kvgate::cuda {

int64_t widen_chunk_rows(int64_t cols, size_t scratch_bytes) {
  const size_t row = static_cast<size_t>(std::max<int64_t>(cols, 1)) * sizeof(float);
  return std::max<int64_t>(1, static_cast<int64_t>(scratch_bytes / row));
}

std::vector<WidenPiece> widen_pieces(std::span<const int64_t> run_rows, int64_t chunk_rows) {
  int64_t total = 0;
  for (const int64_t r : run_rows) total += r;
  std::vector<WidenPiece> pieces;
  int64_t chunk = 0;
  for (int64_t c0 = 0; c0 < total; c0 += chunk_rows, ++chunk) {
    const int64_t c1 = std::min(total, c0 + chunk_rows);
    int64_t r0 = 0;  // the run's first row in the matrix
    for (size_t run = 0; run < run_rows.size(); r0 += run_rows[run], ++run) {
      const int64_t a = std::max(c0, r0), b = std::min(c1, r0 + run_rows[run]);
      if (a < b) pieces.push_back({chunk, c0, c1 - c0, run, a - r0, b - a, a - c0});
    }
  }
  return pieces;
}

}  // namespace kvgate::cuda
