#include "kernels/convert.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda_error.h"
#include "kernels/launch.cuh"
#include "kernels/weight_decode.cuh"

namespace kvgate::cuda {
namespace {

template <typename T>
__global__ void narrow_kernel(const float* x, int64_t n, T* dst) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if constexpr (std::is_same_v<T, __half>)
      dst[i] = __float2half_rn(x[i]);
    else
      dst[i] = __float2bfloat16_rn(x[i]);
  }
}

template <WeightType type>
__global__ void widen_kernel(const unsigned char* src, size_t row_bytes, int64_t rows, int64_t cols, float* dst) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c >= cols) return;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    dst[r * cols + c] = decode_weight<type>(src + static_cast<size_t>(r) * row_bytes, c);
}

}  // namespace

void narrow_f32(const float* x, int64_t n, WeightType to, void* dst, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(blocks_for(n, kThreads), 65535));
  if (to == WeightType::kF16)
    narrow_kernel<<<blocks, kThreads, 0, stream>>>(x, n, static_cast<__half*>(dst));
  else if (to == WeightType::kBF16)
    narrow_kernel<<<blocks, kThreads, 0, stream>>>(x, n, static_cast<__nv_bfloat16*>(dst));
  else
    throw Error("narrow_f32: the target type must be f16 or bf16");
  check_launch("narrow_f32");
}

void widen_rows(WeightType type, const void* src, size_t row_bytes, int64_t rows, int64_t cols, float* dst,
                cudaStream_t stream) {
  if (rows == 0) return;
  constexpr int kThreads = 256;
  const dim3 grid(blocks_for(cols, kThreads), grid_rows(rows));
  dispatch_weight_type(type, [&](auto t) {
    widen_kernel<decltype(t)::value>
        <<<grid, kThreads, 0, stream>>>(static_cast<const unsigned char*>(src), row_bytes, rows, cols, dst);
  });
  check_launch("widen_rows");
}

}  // namespace kvgate::cuda
