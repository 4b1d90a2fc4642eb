#include "kernels/rmsnorm.h"

#include "kernels/activation_store.cuh"
#include "kernels/cuda_error.h"
#include "kernels/warp_reduce.cuh"

namespace kvgate::cuda {
namespace {

constexpr int kThreads = 256;

// One block per row: the sum of squares in a block reduction, then the scale.
template <typename T>
__global__ void rmsnorm_kernel(const float* x, const int32_t* rows, const float* w, int32_t dim, float eps, T* out) {
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const float* xr = x + (rows ? static_cast<int64_t>(rows[r]) : r) * dim;
  float ss = 0.0f;
  for (int32_t i = threadIdx.x; i < dim; i += blockDim.x) ss += xr[i] * xr[i];
  ss = block_sum(ss, scratch);
  const float scale = 1.0f / sqrtf(ss / static_cast<float>(dim) + eps);
  for (int32_t i = threadIdx.x; i < dim; i += blockDim.x) store_activation(&out[r * dim + i], w[i] * (scale * xr[i]));
}

__global__ void rmsnorm_add_kernel(const float* h, const float* w, int32_t dim, float eps, float* x) {
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const float* hr = h + r * dim;
  float* xr = x + r * dim;
  float ss = 0.0f;
  for (int32_t i = threadIdx.x; i < dim; i += blockDim.x) ss += hr[i] * hr[i];
  ss = block_sum(ss, scratch);
  const float scale = 1.0f / sqrtf(ss / static_cast<float>(dim) + eps);
  // Rounded as the CPU's two steps are: the normed value, then the sum.
  for (int32_t i = threadIdx.x; i < dim; i += blockDim.x) xr[i] = __fadd_rn(xr[i], __fmul_rn(w[i], scale * hr[i]));
}

}  // namespace

void rmsnorm_add_rows(const float* h, int64_t n, const float* w, int32_t dim, float eps, float* x,
                      cudaStream_t stream) {
  if (n == 0) return;
  rmsnorm_add_kernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(h, w, dim, eps, x);
  check_launch("rmsnorm_add_rows");
}

void rmsnorm_rows(const float* x, const int32_t* rows, int64_t n, const float* w, int32_t dim, float eps, void* out,
                  WeightType out_type, cudaStream_t stream) {
  if (n == 0) return;
  dispatch_activation_type(out_type, "rmsnorm_rows", [&](auto tag) {
    using T = decltype(tag);
    rmsnorm_kernel<T><<<static_cast<unsigned>(n), kThreads, 0, stream>>>(x, rows, w, dim, eps, static_cast<T*>(out));
  });
  check_launch("rmsnorm_rows");
}

}  // namespace kvgate::cuda
