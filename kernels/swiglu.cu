#include "kernels/swiglu.h"

#include "kernels/cuda_error.h"
#include "kernels/launch.cuh"

namespace kvgate::cuda {
namespace {

__global__ void swiglu_kernel(const float* gate_up, int64_t n, int32_t ffn, float* out) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= ffn) return;
  for (int64_t r = blockIdx.y; r < n; r += gridDim.y) {
    const float g = gate_up[r * 2 * ffn + i], u = gate_up[r * 2 * ffn + ffn + i];
    out[r * ffn + i] = g / (1.0f + expf(-g)) * u;
  }
}

}  // namespace

void swiglu_rows(const float* gate_up, int64_t n, int32_t ffn, float* out, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const dim3 grid(blocks_for(ffn, kThreads), grid_rows(n));
  swiglu_kernel<<<grid, kThreads, 0, stream>>>(gate_up, n, ffn, out);
  check_launch("swiglu_rows");
}

}  // namespace kvgate::cuda
