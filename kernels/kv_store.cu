#include "kernels/kv_store.h"

#include "kernels/cuda_error.h"
#include "kernels/kv_element.cuh"
#include "kernels/launch.cuh"

namespace kvgate::cuda {
namespace {

template <typename T>
__global__ void kv_store_kernel(KvPoolGeometry g, T* pool, int32_t layer, const float* k, const float* v,
                                int64_t stride, const int64_t* slots, int64_t n) {
  const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.kv_dim) return;
  for (int64_t r = blockIdx.y; r < n; r += gridDim.y) {
    const int64_t s = slots[r];
    if (s < 0) continue;
    const auto block = static_cast<int32_t>(s / g.block_size), slot = static_cast<int32_t>(s % g.block_size);
    pool[g.offset(block, layer, 0, slot) + i] = kv_from_float<T>(k[r * stride + i]);
    pool[g.offset(block, layer, 1, slot) + i] = kv_from_float<T>(v[r * stride + i]);
  }
}

}  // namespace

void kv_store(const KvPoolGeometry& g, KvType type, void* pool, int32_t layer, const float* k, const float* v,
              int64_t stride, const int64_t* slots, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 128;
  const dim3 grid(blocks_for(g.kv_dim, kThreads), grid_rows(n));
  dispatch_kv_type(type, [&](auto tag) {
    using T = decltype(tag);
    kv_store_kernel<T><<<grid, kThreads, 0, stream>>>(g, static_cast<T*>(pool), layer, k, v, stride, slots, n);
  });
  check_launch("kv_store");
}

}  // namespace kvgate::cuda
