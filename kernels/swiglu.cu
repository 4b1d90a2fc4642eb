#include "kernels/swiglu.h"

#include "kernels/activation_store.cuh"
#include "kernels/cuda_error.h"
#include "kernels/launch.cuh"

namespace kvgate::cuda {
namespace {

template <typename T>
__global__ void swiglu_kernel(const float* gate_up, int64_t n, int32_t ffn, T* out) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= ffn) return;
  for (int64_t r = blockIdx.y; r < n; r += gridDim.y) {
    const float g = gate_up[r * 2 * ffn + i], u = gate_up[r * 2 * ffn + ffn + i];
    store_activation(&out[r * ffn + i], g / (1.0f + expf(-g)) * u);
  }
}

}  // namespace

void swiglu_rows(const float* gate_up, int64_t n, int32_t ffn, void* out, WeightType out_type, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const dim3 grid(blocks_for(ffn, kThreads), grid_rows(n));
  dispatch_activation_type(out_type, "swiglu_rows", [&](auto tag) {
    using T = decltype(tag);
    swiglu_kernel<T><<<grid, kThreads, 0, stream>>>(gate_up, n, ffn, static_cast<T*>(out));
  });
  check_launch("swiglu_rows");
}

}  // namespace kvgate::cuda
