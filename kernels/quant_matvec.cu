#include "kernels/quant_matvec.h"

#include <string>

#include "base/error.h"
#include "kernels/cuda_error.h"
#include "kernels/quant_matvec_piece.h"
#include "kernels/warp_reduce.cuh"

namespace kvgate::cuda {
namespace {

// As q8_0_matvec: a thread block computes kRows weight rows for all n
// activation rows, its kWarps warps taking the rows' steps in turn (warp w:
// steps w, w + kWarps, ...), and their partial sums meet in shared memory.
// Two rows share each activation load; four warps keep a short row's steps
// in flight at once.
constexpr int kRows = 2;
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarpSize;
static_assert(kMatvecLanes == kWarpSize);

// __restrict__: the weights and activations are read-only for the launch,
// so their loads may take the read-only (non-coherent) path.
template <WeightType T, int N>
__global__ void __launch_bounds__(kThreads)
    quant_matvec_kernel(const unsigned char* __restrict__ w, size_t row_bytes, int64_t rows, int64_t cols,
                        const float* __restrict__ x, float* __restrict__ y, int64_t ldy, float beta) {
  __shared__ float partial[kWarps][kRows][N];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;

  // A row past `rows` (the last block of an odd count) re-reads the last
  // row and is not written.
  const unsigned char* src[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) src[r] = w + static_cast<size_t>(min(row0 + r, rows - 1)) * row_bytes;

  float acc[kRows][N];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int t = 0; t < N; ++t) acc[r][t] = 0.0f;

  // The piece arithmetic is quant_matvec_piece.h's, which the host tests
  // run lane by lane.
  const int64_t steps = (cols + kMatvecStep - 1) / kMatvecStep;
  for (int64_t k = warp; k < steps; k += kWarps) {
    const int64_t c0 = piece_column(k, lane);
    if (c0 < cols) accumulate_piece<T>(src, x, cols, c0, acc);
  }

  // Lanes, then warps in a fixed order: the same sums in the same order on
  // every launch, eager or replayed in a graph.
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int t = 0; t < N; ++t) {
      const float s = warp_sum(acc[r][t]);
      if (lane == 0) partial[warp][r][t] = s;
    }
  __syncthreads();
  if (threadIdx.x < kRows * N) {
    const int r = threadIdx.x / N, t = threadIdx.x % N;
    if (row0 + r < rows) {
      float s = partial[0][r][t];
#pragma unroll
      for (int v = 1; v < kWarps; ++v) s += partial[v][r][t];
      float* out = y + static_cast<int64_t>(t) * ldy + row0 + r;
      *out = beta == 0.0f ? s : fmaf(beta, *out, s);
    }
  }
}

struct Args {
  unsigned grid;
  const unsigned char* w;
  size_t row_bytes;
  int64_t rows, cols;
  const float* x;
  float* y;
  int64_t ldy;
  float beta;
  cudaStream_t stream;
};

// The kernel for type T and the n known at run time.
template <WeightType T, int N = 1>
void launch_for(int64_t n, const Args& a) {
  if (n == N) {
    quant_matvec_kernel<T, N><<<a.grid, kThreads, 0, a.stream>>>(a.w, a.row_bytes, a.rows, a.cols, a.x, a.y, a.ldy,
                                                                 a.beta);
    return;
  }
  if constexpr (N < kQuantMatvecMaxRows) launch_for<T, N + 1>(n, a);
}

}  // namespace

void quant_matvec(WeightType type, const void* w, size_t row_bytes, int64_t rows, int64_t cols, const float* x,
                  int64_t n, float* y, int64_t ldy, float beta, cudaStream_t stream) {
  const auto bad = [](const std::string& why) { throw Error("quant_matvec: " + why); };
  if (!is_block_type(type)) bad("ggml type " + std::to_string(static_cast<uint32_t>(type)) + " is not a block type");
  if (n == 0 || rows == 0) return;
  if (n < 0 || n > kQuantMatvecMaxRows)
    bad(std::to_string(n) + " activation rows (1 to " + std::to_string(kQuantMatvecMaxRows) + ")");
  const int64_t block_values = weight_block(type).values;
  if (cols < 0 || cols % block_values != 0)
    bad("the width " + std::to_string(cols) + " is not whole blocks of " + std::to_string(block_values));
  if (row_bytes < dense_row_bytes(type, cols)) bad("rows are closer than a row's blocks");
  if (!quant_matvec_aligned(x)) bad("the activations are not 16-byte aligned");
  if (ldy < rows) bad("ldy is less than the rows");
  const int64_t grid = (rows + kRows - 1) / kRows;
  if (grid > INT32_MAX) bad("too many rows");
  const Args a{static_cast<unsigned>(grid), static_cast<const unsigned char*>(w), row_bytes, rows, cols, x, y, ldy,
               beta, stream};
  switch (type) {
    case WeightType::kQ4_0: launch_for<WeightType::kQ4_0>(n, a); break;
    case WeightType::kQ4_1: launch_for<WeightType::kQ4_1>(n, a); break;
    case WeightType::kQ5_0: launch_for<WeightType::kQ5_0>(n, a); break;
    case WeightType::kQ5_1: launch_for<WeightType::kQ5_1>(n, a); break;
    case WeightType::kQ8_0: launch_for<WeightType::kQ8_0>(n, a); break;
    case WeightType::kQ4_K: launch_for<WeightType::kQ4_K>(n, a); break;
    case WeightType::kQ5_K: launch_for<WeightType::kQ5_K>(n, a); break;
    case WeightType::kQ6_K: launch_for<WeightType::kQ6_K>(n, a); break;
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16: break;  // refused above
  }
  check_launch("quant_matvec");
}

}  // namespace kvgate::cuda
