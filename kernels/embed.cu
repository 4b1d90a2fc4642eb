#include "kernels/embed.h"

#include "kernels/cuda_error.h"
#include "kernels/launch.cuh"
#include "kernels/weight_decode.cuh"

namespace kvgate::cuda {
namespace {

template <WeightType type>
__global__ void embed_kernel(const unsigned char* table, size_t row_bytes, const int32_t* tokens, int64_t n,
                             int32_t dim, float* out, float scale) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= dim) return;
  for (int64_t t = blockIdx.y; t < n; t += gridDim.y)
    out[t * dim + i] = decode_weight<type>(table + static_cast<size_t>(tokens[t]) * row_bytes, i) * scale;  // x * 1 is x
}

}  // namespace

void embed_rows(WeightType type, const void* table, size_t row_bytes, const int32_t* tokens, int64_t n, int32_t dim,
                float* out, cudaStream_t stream, float scale) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const dim3 grid(blocks_for(dim, kThreads), grid_rows(n));
  dispatch_weight_type(type, [&](auto t) {
    embed_kernel<decltype(t)::value><<<grid, kThreads, 0, stream>>>(static_cast<const unsigned char*>(table),
                                                                    row_bytes, tokens, n, dim, out, scale);
  });
  check_launch("embed_rows");
}

}  // namespace kvgate::cuda
