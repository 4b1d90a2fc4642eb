// One thread block per (query tile, query head): kPrefillTileRows rows, four
// warps of four rows each. Key positions go through shared memory 32 at a
// time (one per lane): a lane scores its position against a row, the warp
// takes the tile's maximum and sum, and each lane updates the output
// dimensions it owns (lane, lane + 32, ...) from the 32 positions' values,
// broadcast by shuffles. Tiles wholly after a row's position (the causal
// mask) are skipped for that row.
#include "kernels/prefill_attention.h"

#include <cfloat>

#include "kernels/cuda_error.h"
#include "kernels/kv_element.cuh"
#include "kernels/warp_reduce.cuh"

namespace kvgate::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kRowsPerWarp = kPrefillTileRows / kWarps;
constexpr int kKeys = kWarpSize;  // key positions per shared-memory tile
constexpr int kDimsPerLane = kMaxHeadDim / kWarpSize;

// Shared memory: the tile's queries [rows][hd], keys [kKeys][hd + 1] (the
// pad keeps the 32 lanes reading 32 different keys off 32 banks) and values
// [kKeys][hd] (read along hd: consecutive lanes, consecutive banks).
size_t shared_bytes(int32_t hd) {
  return sizeof(float) * (static_cast<size_t>(kPrefillTileRows) * hd + static_cast<size_t>(kKeys) * (hd + 1) +
                          static_cast<size_t>(kKeys) * hd);
}

template <typename T>
__global__ void __launch_bounds__(kWarps* kWarpSize)
    prefill_kernel(KvPoolGeometry g, const T* pool, int32_t layer, AttentionShape s, const float* q,
                   int64_t q_stride, float* out, int64_t out_stride, const PrefillTile* tiles,
                   const int32_t* tables) {
  extern __shared__ float smem[];
  const PrefillTile tile = tiles[blockIdx.x];
  const int32_t h = blockIdx.y, kv_head = h / (s.n_heads / s.n_kv_heads);
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int32_t hd = s.head_dim, B = g.block_size;
  const int32_t* table = tables + tile.table;
  float* qs = smem;
  float* ks = qs + kPrefillTileRows * hd;
  float* vs = ks + kKeys * (hd + 1);

  for (int32_t i = threadIdx.x; i < tile.n * hd; i += blockDim.x) {
    const int32_t r = i / hd, d = i % hd;
    qs[r * hd + d] = q[static_cast<int64_t>(tile.row + r) * q_stride + static_cast<int64_t>(h) * hd + d] * s.scale;
  }

  float m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][kDimsPerLane];
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j) {
    m[j] = -FLT_MAX, l[j] = 0.0f;
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) acc[j][i] = 0.0f;
  }

  const int32_t n_keys = tile.pos + tile.n;  // the last row sees every position
  for (int32_t k0 = 0; k0 < n_keys; k0 += kKeys) {
    __syncthreads();  // the previous tile's keys are no longer read
    for (int32_t i = threadIdx.x; i < kKeys * hd; i += blockDim.x) {
      const int32_t j = i / hd, d = i % hd, p = k0 + j;
      float kx = 0.0f, vx = 0.0f;
      if (p < n_keys) {
        const int64_t at = g.offset(table[p / B], layer, 0, p % B) + static_cast<int64_t>(kv_head) * hd + d;
        kx = kv_to_float(pool[at]);
        vx = kv_to_float(pool[at + static_cast<int64_t>(B) * g.kv_dim]);
      }
      ks[j * (hd + 1) + d] = kx;
      vs[j * hd + d] = vx;
    }
    __syncthreads();

#pragma unroll
    for (int j = 0; j < kRowsPerWarp; ++j) {
      const int32_t r = warp * kRowsPerWarp + j;
      const int32_t row_pos = tile.pos + r;
      if (r >= tile.n || k0 > row_pos) continue;  // warp-uniform
      const int32_t p = k0 + lane;
      const bool seen = p <= row_pos;
      float score = -FLT_MAX;
      if (seen) {
        score = 0.0f;
        for (int32_t d = 0; d < hd; ++d) score += qs[r * hd + d] * ks[lane * (hd + 1) + d];
      }
      const float m_new = fmaxf(m[j], warp_max(score));
      const float alpha = expf(m[j] - m_new);
      const float w = seen ? expf(score - m_new) : 0.0f;
      l[j] = l[j] * alpha + warp_sum(w);
#pragma unroll
      for (int i = 0; i < kDimsPerLane; ++i) acc[j][i] *= alpha;
      for (int jj = 0; jj < kKeys; ++jj) {
        const float wj = __shfl_sync(0xffffffffu, w, jj);
#pragma unroll
        for (int i = 0; i < kDimsPerLane; ++i) {
          const int d = lane + kWarpSize * i;
          if (d < hd) acc[j][i] += wj * vs[jj * hd + d];
        }
      }
      m[j] = m_new;
    }
  }

#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j) {
    const int32_t r = warp * kRowsPerWarp + j;
    if (r >= tile.n) continue;
    float* o = out + static_cast<int64_t>(tile.row + r) * out_stride + static_cast<int64_t>(h) * hd;
#pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i) {
      const int d = lane + kWarpSize * i;
      if (d < hd) o[d] = acc[j][i] / l[j];
    }
  }
}

}  // namespace

void prefill_attention(const KvPoolGeometry& g, KvType type, const void* pool, int32_t layer,
                       const AttentionShape& shape, const float* q, int64_t q_stride, float* out, int64_t out_stride,
                       const PrefillTile* tiles, int32_t n_tiles, const int32_t* tables, cudaStream_t stream) {
  if (n_tiles == 0) return;
  if (shape.head_dim > kMaxHeadDim) throw Error("prefill_attention: head_dim above 256");
  const size_t smem = shared_bytes(shape.head_dim);
  const dim3 grid(static_cast<unsigned>(n_tiles), static_cast<unsigned>(shape.n_heads));
  dispatch_kv_type(type, [&](auto tag) {
    using T = decltype(tag);
    // Above 48 KiB (head_dim past 128) a kernel must opt in to more shared memory.
    check(cudaFuncSetAttribute(prefill_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(smem)),
          "prefill_attention: shared memory size");
    prefill_kernel<T><<<grid, kWarps * kWarpSize, smem, stream>>>(g, static_cast<const T*>(pool), layer, shape, q,
                                                                  q_stride, out, out_stride, tiles, tables);
  });
  check_launch("prefill_attention");
}

}  // namespace kvgate::cuda
