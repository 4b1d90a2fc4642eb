#include "kernels/softcap.h"

#include "kernels/cuda_error.h"
#include "kernels/launch.cuh"

namespace kvgate::cuda {
namespace {

__global__ void softcap_kernel(float* x, int64_t n, float inv, float cap) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] = __fmul_rn(tanhf(__fmul_rn(x[i], inv)), cap);
}

}  // namespace

void softcap_values(float* x, int64_t n, float cap, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  // A grid-stride loop: logits are rows x vocab (up to 128 x 262,144 for
  // gemma 3), well past one block per value being worth it.
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(blocks_for(n, kThreads), 4096));
  softcap_kernel<<<blocks, kThreads, 0, stream>>>(x, n, 1.0f / cap, cap);
  check_launch("softcap_values");
}

}  // namespace kvgate::cuda
