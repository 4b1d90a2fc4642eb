// One thread block per (query, query head); its warps split the positions
// (warp w takes p = w, w + W, ...), each keeping its own running maximum m,
// sum l and output accumulator, merged at the end. A lane owns head
// dimensions lane, lane + 32, ...; the q.k dot product is a warp reduction.
// Part 1 is correct first: the KV head is read once per query head, not
// once per group (part 2 shares it across the group).
#include "kernels/paged_attention.h"

#include <cfloat>

#include "kernels/cuda_error.h"
#include "kernels/kv_element.cuh"
#include "kernels/warp_reduce.cuh"

namespace kvgate::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kDimsPerLane = kMaxHeadDim / kWarpSize;

template <typename T>
__global__ void __launch_bounds__(kWarps* kWarpSize)
    decode_kernel(KvPoolGeometry g, const T* pool, int32_t layer, AttentionShape s, const float* q, int64_t q_stride,
                  float* out, int64_t out_stride, const DecodeQuery* queries, const int32_t* tables) {
  const DecodeQuery dq = queries[blockIdx.x];
  const int32_t h = blockIdx.y, kv_head = h / (s.n_heads / s.n_kv_heads);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int32_t hd = s.head_dim, B = g.block_size;
  const int32_t* table = tables + dq.table;

  const float* qh = q + static_cast<int64_t>(dq.row) * q_stride + static_cast<int64_t>(h) * hd;
  float qr[kDimsPerLane], acc[kDimsPerLane];
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int d = lane + kWarpSize * i;
    qr[i] = d < hd ? qh[d] * s.scale : 0.0f;
    acc[i] = 0.0f;
  }
  float m = -FLT_MAX, l = 0.0f;
  for (int32_t p = warp; p <= dq.pos; p += kWarps) {
    const T* k = pool + g.offset(table[p / B], layer, 0, p % B) + static_cast<int64_t>(kv_head) * hd;
    const T* v = k + static_cast<int64_t>(B) * g.kv_dim;  // V follows K in the block (kv_pool_geometry.h)
    float dot = 0.0f;
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
      const int d = lane + kWarpSize * i;
      if (d < hd) dot += qr[i] * kv_to_float(k[d]);
    }
    dot = warp_sum(dot);
    const float m_new = fmaxf(m, dot);
    const float alpha = expf(m - m_new), w = expf(dot - m_new);
    l = l * alpha + w;
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
      const int d = lane + kWarpSize * i;
      if (d < hd) acc[i] = acc[i] * alpha + w * kv_to_float(v[d]);
    }
    m = m_new;
  }

  // Merge the warps: rescale each to the largest maximum. A warp that saw no
  // position (a context shorter than kWarps) has l = 0 and weighs nothing.
  __shared__ float sm[kWarps], sl[kWarps], sacc[kWarps][kMaxHeadDim];
  if (lane == 0) sm[warp] = m, sl[warp] = l;
#pragma unroll
  for (int i = 0; i < kDimsPerLane; ++i) {
    const int d = lane + kWarpSize * i;
    if (d < hd) sacc[warp][d] = acc[i];
  }
  __syncthreads();
  if (warp != 0) return;
  float mx = -FLT_MAX;
  for (int w = 0; w < kWarps; ++w)
    if (sl[w] > 0) mx = fmaxf(mx, sm[w]);
  float f[kWarps], total = 0.0f;
  for (int w = 0; w < kWarps; ++w) {
    f[w] = sl[w] > 0 ? expf(sm[w] - mx) : 0.0f;
    total += sl[w] * f[w];
  }
  float* o = out + static_cast<int64_t>(dq.row) * out_stride + static_cast<int64_t>(h) * hd;
  for (int d = lane; d < hd; d += kWarpSize) {
    float sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) sum += sacc[w][d] * f[w];
    o[d] = sum / total;
  }
}

}  // namespace

void paged_decode_attention(const KvPoolGeometry& g, KvType type, const void* pool, int32_t layer,
                            const AttentionShape& shape, const float* q, int64_t q_stride, float* out,
                            int64_t out_stride, const DecodeQuery* queries, int32_t n, const int32_t* tables,
                            cudaStream_t stream) {
  if (n == 0) return;
  if (shape.head_dim > kMaxHeadDim) throw Error("paged_decode_attention: head_dim above 256");
  const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(shape.n_heads));
  dispatch_kv_type(type, [&](auto tag) {
    using T = decltype(tag);
    decode_kernel<T><<<grid, kWarps * kWarpSize, 0, stream>>>(g, static_cast<const T*>(pool), layer, shape, q,
                                                              q_stride, out, out_stride, queries, tables);
  });
  check_launch("paged_decode_attention");
}

}  // namespace kvgate::cuda
