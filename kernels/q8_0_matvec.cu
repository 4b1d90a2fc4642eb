#include "kernels/q8_0_matvec.h"

#include <cuda_fp16.h>

#include <string>

#include "base/error.h"
#include "kernels/cuda_error.h"
#include "kernels/warp_reduce.cuh"
#include "kernels/weight_decode.cuh"

namespace kvgate::cuda {
namespace {

// A Q8_0 block: an f16 scale d, then 32 int8s q; weight = d * q.
constexpr int kBlockWeights = 32;
constexpr int kBlockBytes = 34;

// A warp's step along its rows: 16 blocks, 512 weights, 544 bytes = 34
// 16-byte vectors, so a row whose start is 16-byte aligned keeps every
// step's start aligned. A lane widens half a block: 16 weights.
constexpr int kChunkBlocks = 16;
constexpr int kChunkWeights = kChunkBlocks * kBlockWeights;
constexpr int kChunkBytes = kChunkBlocks * kBlockBytes;
constexpr int kChunkVectors = kChunkBytes / 16;
static_assert(kChunkBytes % 16 == 0 && kChunkBlocks * 2 == kWarpSize);
// One vector of padding: the lane widening the last half block reads one
// 4-byte word past the chunk (it discards it; see widen_words).
constexpr int kStagedVectors = kChunkVectors + 1;

// A thread block computes kRows output rows (weight rows) for all n
// activation rows; its kWarps warps take the rows' chunks in turn (warp w:
// chunks w, w + kWarps, ...), each with kStages chunks in flight, and their
// partial sums meet in shared memory. Two rows share each activation load.
// Splitting a row among four warps is for the matrices of few rows (wo and
// down have 4,096: 2,048 blocks over 132 SMs): a 4,096-wide row's 8 chunks
// are all in flight at once, where a warp per row would wait for them in
// turn.
constexpr int kRows = 2;
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarpSize;
constexpr int kStages = 2;
static_assert(kStages == 2, "the kernel's loop double-buffers: buffer k & 1 for the warp's k-th chunk");

// Global to shared, 16 bytes, bypassing L1: the weights are read once, and
// L1 is left to the activations every block reads.
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `pending` of this thread's most recent groups are
// still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

// One row's chunk of `blocks` blocks (at most kChunkBlocks), from `src` to
// `dst`, by the whole warp. A whole chunk at a 16-byte aligned address goes
// as 34 asynchronous 16-byte copies (lanes 0 and 1 take two); anything
// else (rows only 2-byte aligned, the short last chunk of a row, which
// 16-byte copies would read past) as 2-byte loads, which every row allows.
__device__ __forceinline__ void stage_chunk(const unsigned char* src, int blocks, bool aligned, uint4* dst,
                                            int lane) {
  if (aligned && blocks == kChunkBlocks) {
    const auto* s = reinterpret_cast<const uint4*>(src);
    cp_async16(dst + lane, s + lane);
    if (lane < kChunkVectors - kWarpSize) cp_async16(dst + kWarpSize + lane, s + kWarpSize + lane);
  } else {
    const auto* s = reinterpret_cast<const unsigned short*>(src);
    auto* d = reinterpret_cast<unsigned short*>(dst);
    for (int i = lane; i < blocks * (kBlockBytes / 2); i += kWarpSize) d[i] = __ldcs(s + i);
  }
}

// int8 q (byte `b` of `biased`, which holds four q + 128) as f32, exactly:
// 0x4B000000 | (q + 128) is the float 2^23 + q + 128. A byte permute and
// an add, where the int-to-float conversion runs at an eighth of the FMA
// rate on sm_90 (16 against 128 per SM per clock) and would bound the
// kernel below the memory's speed.
template <int b>
__device__ __forceinline__ float q_to_float(uint32_t biased) {
  return __int_as_float(static_cast<int>(__byte_perm(biased, 0x4B000000u, 0x7540u | b))) - 8388736.0f;
}

// Lane `lane`'s half block of a staged chunk: block m = lane / 2, weights
// 16h .. 16h + 15 with h = lane % 2; its scale `d`, and its 16 int8s as
// four words, each holding four q + 128. The int8s start at byte
// 34m + 2 + 16h, which is 4-byte aligned for odd m and 2 bytes past that
// for even m: five aligned words are read and shifted into place (the
// fifth is unused, possibly padding or a neighbour's byte, when the shift
// is 0).
struct HalfBlock {
  float d;
  uint32_t q[4];
};

__device__ __forceinline__ HalfBlock widen_words(const uint4* chunk, int lane) {
  const int m = lane / 2, h = lane % 2;
  const int q_at = m * kBlockBytes + 2 + 16 * h;
  const int word = q_at / 4, shift = (q_at % 4) * 8;
  const auto* words = reinterpret_cast<const uint32_t*>(chunk);
  HalfBlock hb;
  hb.d = half_bits_to_float(reinterpret_cast<const uint16_t*>(chunk)[m * kBlockBytes / 2]);
  uint32_t w[5];
#pragma unroll
  for (int i = 0; i < 5; ++i) w[i] = words[word + i];
#pragma unroll
  for (int i = 0; i < 4; ++i) hb.q[i] = __funnelshift_r(w[i], w[i + 1], shift) ^ 0x80808080u;
  return hb;
}

// acc[r][t] += the lane's 16 weights of row r times x[t] at the same 16
// columns (xs: x's row 0 there; rows `cols` apart). Each weight is d * q
// rounded to f32 once, as dequantize_row computes it, then multiplied into
// each activation row.
template <int N>
__device__ __forceinline__ void accumulate(const HalfBlock (&hb)[kRows], const float* xs, int64_t cols,
                                           float (&acc)[kRows][N]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float w[kRows][4];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      w[r][0] = __fmul_rn(hb[r].d, q_to_float<0>(hb[r].q[j]));
      w[r][1] = __fmul_rn(hb[r].d, q_to_float<1>(hb[r].q[j]));
      w[r][2] = __fmul_rn(hb[r].d, q_to_float<2>(hb[r].q[j]));
      w[r][3] = __fmul_rn(hb[r].d, q_to_float<3>(hb[r].q[j]));
    }
#pragma unroll
    for (int t = 0; t < N; ++t) {
      const float4 xv = __ldg(reinterpret_cast<const float4*>(xs + t * cols) + j);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        acc[r][t] = fmaf(w[r][0], xv.x, acc[r][t]);
        acc[r][t] = fmaf(w[r][1], xv.y, acc[r][t]);
        acc[r][t] = fmaf(w[r][2], xv.z, acc[r][t]);
        acc[r][t] = fmaf(w[r][3], xv.w, acc[r][t]);
      }
    }
  }
}

// Block b: weight rows kRows b .. kRows b + kRows - 1 against all N
// activation rows. A row past `rows` (the last block of an odd count)
// re-reads the last row and is not written.
template <int N>
__global__ void __launch_bounds__(kThreads)
    q8_0_matvec_kernel(const unsigned char* w, size_t row_bytes, int64_t rows, int32_t n_blocks, const float* x,
                       int64_t cols, float* y, int64_t ldy, float beta) {
  __shared__ uint4 staged[kStages][kWarps][kRows][kStagedVectors];
  __shared__ float partial[kWarps][kRows][N];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;

  const unsigned char* src[kRows];
  bool aligned[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    src[r] = w + static_cast<size_t>(min(row0 + r, rows - 1)) * row_bytes;
    aligned[r] = reinterpret_cast<uintptr_t>(src[r]) % 16 == 0;
  }
  // The padding vectors are only ever read as discarded words; zeroed so
  // that nothing reads uninitialized memory.
  if (lane < kStages * kRows) staged[lane / kRows][warp][lane % kRows][kChunkVectors] = make_uint4(0, 0, 0, 0);

  const int n_chunks = (n_blocks + kChunkBlocks - 1) / kChunkBlocks;
  const auto blocks_in = [&](int k) { return min(kChunkBlocks, n_blocks - k * kChunkBlocks); };
  // Chunk k of both rows into buffer `buf`; one copy group per call, empty
  // past the last chunk, so that the wait below counts groups uniformly.
  const auto stage = [&](int k, int buf) {
    if (k < n_chunks) {
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        stage_chunk(src[r] + static_cast<size_t>(k) * kChunkBytes, blocks_in(k), aligned[r], staged[buf][warp][r],
                    lane);
    }
    cp_async_commit();
  };

  float acc[kRows][N];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int t = 0; t < N; ++t) acc[r][t] = 0.0f;

  stage(warp, 0);
  int buf = 0;
  for (int k = warp; k < n_chunks; k += kWarps, buf ^= 1) {
    // The next chunk's copies go out before this one is used: kStages
    // chunks per row in flight. Its buffer was last read before the
    // __syncwarp that ended the previous iteration.
    stage(k + kWarps, buf ^ 1);
    cp_async_wait<kStages - 1>();  // this chunk's group has landed (this lane's copies)
    __syncwarp();                  // and every lane's, 2-byte stores included
    if (lane / 2 < blocks_in(k)) {
      HalfBlock hb[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) hb[r] = widen_words(staged[buf][warp][r], lane);
      accumulate<N>(hb, x + static_cast<int64_t>(k) * kChunkWeights + 16 * lane, cols, acc);
    }
    __syncwarp();  // every lane is done with `buf` before it is staged into again
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

template <int N>
void launch(unsigned grid, const unsigned char* w, size_t row_bytes, int64_t rows, int32_t n_blocks, const float* x,
            int64_t cols, float* y, int64_t ldy, float beta, cudaStream_t stream) {
  q8_0_matvec_kernel<N><<<grid, kThreads, 0, stream>>>(w, row_bytes, rows, n_blocks, x, cols, y, ldy, beta);
}

// launch<n>, for the n known at run time.
template <int N = 1>
void launch_for(int64_t n, unsigned grid, const unsigned char* w, size_t row_bytes, int64_t rows, int32_t n_blocks,
                const float* x, int64_t cols, float* y, int64_t ldy, float beta, cudaStream_t stream) {
  if (n == N) return launch<N>(grid, w, row_bytes, rows, n_blocks, x, cols, y, ldy, beta, stream);
  if constexpr (N < kQ8_0MatvecMaxRows)
    launch_for<N + 1>(n, grid, w, row_bytes, rows, n_blocks, x, cols, y, ldy, beta, stream);
}

}  // namespace

void q8_0_matvec(const void* w, size_t row_bytes, int64_t rows, int64_t cols, const float* x, int64_t n, float* y,
                 int64_t ldy, float beta, cudaStream_t stream) {
  if (n == 0 || rows == 0) return;
  const auto bad = [](const std::string& why) { throw Error("q8_0_matvec: " + why); };
  if (n < 0 || n > kQ8_0MatvecMaxRows)
    bad(std::to_string(n) + " activation rows (1 to " + std::to_string(kQ8_0MatvecMaxRows) + ")");
  if (cols < 0 || cols % kBlockWeights != 0 || cols / kBlockWeights > INT32_MAX)
    bad("the width " + std::to_string(cols) + " is not whole Q8_0 blocks");
  if (row_bytes < static_cast<size_t>(cols / kBlockWeights * kBlockBytes) || row_bytes % 2 != 0 ||
      reinterpret_cast<uintptr_t>(w) % 2 != 0)
    bad("rows must be 2-byte aligned and at least cols / 32 * 34 bytes apart");
  if (!q8_0_matvec_aligned(x)) bad("the activations are not 16-byte aligned");
  if (ldy < rows) bad("ldy is less than the rows");
  const int64_t grid = (rows + kRows - 1) / kRows;
  if (grid > INT32_MAX) bad("too many rows");
  launch_for(n, static_cast<unsigned>(grid), static_cast<const unsigned char*>(w), row_bytes, rows,
             static_cast<int32_t>(cols / kBlockWeights), x, cols, y, ldy, beta, stream);
  check_launch("q8_0_matvec");
}

}  // namespace kvgate::cuda
