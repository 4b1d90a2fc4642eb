#include "kernels/qkv_finish.h"

#include "kernels/cuda_error.h"
#include "kernels/warp_reduce.cuh"

namespace kvgate::cuda {
namespace {

constexpr int kThreads = 128;

// One block per row. The bias first, over the whole row, then a warp per
// head of q and k: the sum of squares by warp reduction (the CPU sums in
// order: a few ulps apart), the scale as the CPU's rmsnorm computes it,
// w * (scale * x). The barrier between the two keeps a warp from reading a
// head another warp is still adding the bias to.
__global__ void qkv_finish_kernel(QkvRows rows, int32_t n_kv_heads, const float* bias, const float* q_norm,
                                  const float* k_norm, float eps) {
  const int32_t hd = rows.head_dim, heads = rows.n_heads + n_kv_heads;
  float* const x = rows.x + static_cast<int64_t>(blockIdx.x) * rows.stride;
  if (bias) {
    const int32_t width = (heads + n_kv_heads) * hd;
    for (int32_t i = threadIdx.x; i < width; i += blockDim.x) x[i] = __fadd_rn(x[i], bias[i]);
    __syncthreads();
  }
  if (!q_norm) return;
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, warps = blockDim.x / kWarpSize;
  for (int32_t h = warp; h < heads; h += warps) {
    float* const v = x + static_cast<int64_t>(h) * hd;  // k's heads follow q's in the row
    const float* const w = h < rows.n_heads ? q_norm : k_norm;
    float ss = 0.0f;
    for (int32_t i = lane; i < hd; i += kWarpSize) ss += v[i] * v[i];
    ss = warp_sum(ss);
    const float scale = 1.0f / sqrtf(ss / static_cast<float>(hd) + eps);
    for (int32_t i = lane; i < hd; i += kWarpSize) v[i] = __fmul_rn(w[i], __fmul_rn(scale, v[i]));
  }
}

}  // namespace

void qkv_finish(QkvRows rows, int32_t n_kv_heads, int64_t n, const float* bias, const float* q_norm,
                const float* k_norm, float eps, cudaStream_t stream) {
  if (n == 0 || (!bias && !q_norm)) return;
  if (!q_norm != !k_norm) throw Error("qkv_finish: q_norm and k_norm come together");
  // One block per row: a step has at most a few thousand rows, far below
  // the grid's x limit.
  qkv_finish_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(rows, n_kv_heads, bias, q_norm, k_norm, eps);
  check_launch("qkv_finish");
}

}  // namespace kvgate::cuda
