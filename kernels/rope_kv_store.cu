#include "kernels/rope_kv_store.h"

#include "kernels/cuda_error.h"
#include "kernels/kv_element.cuh"
#include "kernels/launch.cuh"

namespace kvgate::cuda {

namespace {

// The pair (a, b) turned by the angle whose cosine and sine are c and s,
// with separate roundings, as the CPU's (ISO C++, no contraction) does.
__device__ __forceinline__ float rotated_first(float a, float b, float c, float s) {
  return __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
}
__device__ __forceinline__ float rotated_second(float a, float b, float c, float s) {
  return __fadd_rn(__fmul_rn(a, s), __fmul_rn(b, c));
}

// Per row, one thread per item: q's pairs (rotated in place: a thread owns
// both halves of its pair, so no thread reads what another writes), then
// k's values (each thread reads its pair and stores its own rotated half),
// then v's values.
template <typename T>
__global__ void rope_store_kv_kernel(QkvRows rows, const int32_t* pos, const int64_t* slots, int64_t n, RopeTable rope,
                                     KvPoolGeometry g, T* pool, int32_t layer) {
  const int32_t hd = rows.head_dim, half = rope.half, q_pairs = rows.n_heads * half, kvd = g.kv_dim;
  const int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= q_pairs + 2 * kvd) return;
  for (int64_t r = blockIdx.y; r < n; r += gridDim.y) {
    float* const q = rows.x + r * rows.stride;
    float* const k = q + static_cast<int64_t>(rows.n_heads) * hd;
    const float* const cos = rope.cos + static_cast<int64_t>(pos[r]) * half;
    const float* const sin = rope.sin + static_cast<int64_t>(pos[r]) * half;
    if (j < q_pairs) {
      // Pair i of its head, found by its first value: 2i (adjacent) or i (halves).
      const int32_t i = j % half;
      const RopeSlot p = rope_slot(rope, rope.halves ? i : 2 * i);
      float* const v = q + static_cast<int64_t>(j / half) * hd + p.first;
      const float a = v[0], b = v[p.gap];
      v[0] = rotated_first(a, b, cos[i], sin[i]);
      v[p.gap] = rotated_second(a, b, cos[i], sin[i]);
      continue;
    }
    const int64_t s = slots[r];
    if (s < 0) continue;
    const auto block = static_cast<int32_t>(s / g.block_size), slot = static_cast<int32_t>(s % g.block_size);
    if (const int32_t e = j - q_pairs; e < kvd) {
      // Element d of its head: pair i's first or second value, or past
      // rope_dim (stored as it is).
      const int32_t d = e % hd;
      const RopeSlot p = rope_slot(rope, d);
      float x = k[e];
      if (const int32_t i = p.pair; i < half) {
        const int64_t first = e - d + p.first;
        const float a = k[first], b = k[first + p.gap];
        x = p.second ? rotated_second(a, b, cos[i], sin[i]) : rotated_first(a, b, cos[i], sin[i]);
      }
      pool[g.offset(block, layer, 0, slot) + e] = kv_from_float<T>(x);
    } else {
      pool[g.offset(block, layer, 1, slot) + (e - kvd)] = kv_from_float<T>(k[e]);  // v follows k in the row
    }
  }
}

}  // namespace

void rope_store_kv(QkvRows rows, const int32_t* pos, const int64_t* slots, int64_t n, const RopeTable& rope,
                   const KvPoolGeometry& g, KvType type, void* pool, int32_t layer, cudaStream_t stream) {
  if (n == 0) return;
  constexpr int kThreads = 128;
  const int32_t items = rows.n_heads * rope.half + 2 * g.kv_dim;
  const dim3 grid(blocks_for(items, kThreads), grid_rows(n));
  dispatch_kv_type(type, [&](auto tag) {
    using T = decltype(tag);
    rope_store_kv_kernel<T><<<grid, kThreads, 0, stream>>>(rows, pos, slots, n, rope, g, static_cast<T*>(pool), layer);
  });
  check_launch("rope_store_kv");
}

}  // namespace kvgate::cuda
