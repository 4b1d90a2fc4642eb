// Prefill attention: a chunk of a sequence's new tokens (a PrefillTile of at
// most kPrefillTileRows rows) against every earlier position of the sequence,
// K/V read through the block table. Two kernels, picked by KV type and
// head_dim.
//
// Tensor cores (f16 / bf16 K/V, head_dim a multiple of 16): FlashAttention-2.
// One thread block per (query tile, group of query heads sharing one KV
// head), one warp per query head: warp w owns the tile's 16 rows of head
// h0 + w, so the block's M is G x 16 (64 for Llama-3's G = 4). Prefill at
// long contexts is bound by K/V movement, not by the scores, and a group's
// heads read the same K/V: each 64-position K/V tile is fetched from the
// pool once per group into shared memory and read by all G warps, which is
// what makes GQA prefill arithmetic-bound. Within a warp, per key tile:
//   S = Q K^T        WMMA 16x16x16, f32 accumulate, stored to shared memory;
//   online softmax   per row in f32: two lanes per row, running max m,
//                    running sum l, alpha = exp(m_old - m_new);
//   O = alpha O + P V  P rounded to the K/V type, O in WMMA accumulators
//                    (f32) held in registers for the whole key walk.
// Warps own disjoint rows, so the softmax needs no block barrier: two
// __syncthreads per key tile, both around the K/V fill. The rescale of O by a
// per-row alpha needs to know which row each accumulator element holds; WMMA
// leaves that mapping unspecified, so the kernel reads it off once: it loads
// an accumulator fragment from a 16x16 matrix whose element (i, j) is i, and
// keeps each element's row. (load/store_matrix_sync are inverses for one
// fragment type, so this is the mapping mma_sync's results use too.) The
// output leaves through shared memory (store_matrix_sync, then coalesced f32
// stores of the live rows divided by l), so pad rows are never written.
// Key tiles start at 0 (on a sliding-window layer, at the tile holding the
// first row's first visible position) and stop at the tile's last position
// + 1: tiles wholly in the causal future are never loaded, and in the last
// tile the 16-key fragments past it are skipped in both products; the window
// and causal masks are applied per score. Gemma 2's soft-capping is applied
// to S in f32 before the softmax. Blocks run the heaviest tiles (latest
// positions) first.
//
// Shared memory per block, with W warps and L = head_dim + 8 (the pad moves
// consecutive rows by 16 bytes, off each other's banks for the fragment
// loads): Q [16W][L], K and V [64][L] in the K/V type, S [W][16][68] f32,
// P [W][16][72], per-row alpha / l [W][16] f32. head_dim 128, W = 4:
// 79,104 bytes (two blocks an SM). W is the largest divisor of G, at most 8,
// that keeps a block within 112 KiB; the fallback is fewer heads a block
// (down to one), each block still a whole 16-row tile.
//
// Numerics: Q is multiplied by the softmax scale in f32 and rounded once to
// the K/V type when staged; K and V are used as stored; P = exp(s - m) <= 1
// is rounded to the K/V type for the second product and l sums the rounded
// weights, so the normalisation matches what was multiplied. Everything else
// (scores, max, exp -- IEEE expf, no fast math --, sums, O, the division) is
// f32. Against an f32 reference on the same K/V the error is that of two
// roundings per weight (about the type's unit roundoff, relative to the
// row's largest output), not of f32 arithmetic.
//
// CUDA cores (f32 K/V, or head_dim not a multiple of 16, e.g. stories260K's
// 8): one thread block per (query tile, query head): kPrefillTileRows rows,
// four warps of four rows each. Key positions go through shared memory 32 at a
// time (one per lane): a lane scores its position against a row, the warp
// takes the tile's maximum and sum, and each lane updates the output
// dimensions it owns (lane, lane + 32, ...) from the 32 positions' values,
// broadcast by shuffles. Tiles wholly after a row's position (the causal
// mask) are skipped for that row. All f32, which the 1e-4 f32 parity needs.
#include "kernels/prefill_attention.h"

#include <mma.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda_error.h"
#include "kernels/kv_element.cuh"
#include "kernels/warp_reduce.cuh"

namespace kvgate::cuda {
namespace {
namespace cuda_core {

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
  // The tile's first row sees the earliest position (all of them but on a
  // sliding-window layer); key tiles before it are never loaded.
  const int32_t k_begin = first_seen(s, tile.pos) / kKeys * kKeys;
  for (int32_t k0 = k_begin; k0 < n_keys; k0 += kKeys) {
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
      const bool seen = p <= row_pos && p >= first_seen(s, row_pos);
      float score = -FLT_MAX;
      if (seen) {
        score = 0.0f;
        for (int32_t d = 0; d < hd; ++d) score += qs[r * hd + d] * ks[lane * (hd + 1) + d];
        score = soft_capped(s, score);
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

}  // namespace cuda_core

namespace tensor_core {

constexpr int kKeys = 64;                // key positions per shared-memory tile
constexpr int kKeyFrags = kKeys / 16;    // 16-key WMMA fragments in a tile
constexpr int kMaxWarps = 8;             // query heads (warps) per block
constexpr int kLds = kKeys + 4;          // S row stride, floats
constexpr int kLdp = kKeys + 8;          // P row stride, elements
constexpr size_t kSharedBudget = 112 * 1024;  // two blocks an SM on sm_90

// Byte offsets of the shared-memory regions; each is a multiple of 32 bytes
// (WMMA wants 256-bit aligned fragment pointers): 16 rows of L = hd + 8
// two-byte elements is 32 L bytes, a 64-row K or V tile 128 L, a warp's S
// 16 x 68 x 4 = 4352 = 32 x 136, its P 16 x 72 x 2 = 2304 = 32 x 72.
struct Layout {
  int ldh;  // Q, K, V row stride, elements
  size_t q, k, v, s, p, stats, total;
  __host__ __device__ Layout(int hd, int warps) {
    ldh = hd + 8;
    q = 0;
    k = q + static_cast<size_t>(warps) * 16 * ldh * 2;
    v = k + static_cast<size_t>(kKeys) * ldh * 2;
    s = v + static_cast<size_t>(kKeys) * ldh * 2;
    p = s + static_cast<size_t>(warps) * 16 * kLds * sizeof(float);
    stats = p + static_cast<size_t>(warps) * 16 * kLdp * 2;
    total = stats + static_cast<size_t>(warps) * 16 * sizeof(float);
  }
};

using Acc = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float>;
constexpr int kAccElems = Acc::num_elements;

// T: __half or __nv_bfloat16. kFrags: the output fragments (16 columns each)
// a warp holds, head_dim / 16 <= kFrags (4, 8 or 16). blockDim.x = 32 W, the
// block's heads blockIdx.y * W + [0, W), all of one KV head.
template <typename T, int kFrags>
__global__ void __launch_bounds__(kMaxWarps* kWarpSize)
    prefill_kernel(KvPoolGeometry g, const T* pool, int32_t layer, AttentionShape s, const float* q,
                   int64_t q_stride, float* out, int64_t out_stride, const PrefillTile* tiles,
                   const int32_t* tables) {
  namespace wmma = nvcuda::wmma;
  static_assert(sizeof(T) == 2, "tensor-core prefill takes 16-bit K/V");
  extern __shared__ __align__(128) unsigned char tc_smem[];
  const int warps = static_cast<int>(blockDim.x) / kWarpSize;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize, lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const PrefillTile tile = tiles[gridDim.x - 1 - blockIdx.x];  // later tiles see more keys: start them first
  const int32_t hd = s.head_dim, B = g.block_size, nf = hd / 16;
  const int32_t h0 = static_cast<int32_t>(blockIdx.y) * warps;
  const int32_t kv_head = h0 / (s.n_heads / s.n_kv_heads);
  const int32_t h = h0 + warp;  // this warp's query head
  const int32_t* table = tables + tile.table;
  const Layout lay(hd, warps);
  const int ldh = lay.ldh;
  T* qs = reinterpret_cast<T*>(tc_smem + lay.q);
  T* ks = reinterpret_cast<T*>(tc_smem + lay.k);
  T* vs = reinterpret_cast<T*>(tc_smem + lay.v);
  float* sw = reinterpret_cast<float*>(tc_smem + lay.s) + warp * 16 * kLds;  // this warp's S
  T* pw = reinterpret_cast<T*>(tc_smem + lay.p) + warp * 16 * kLdp;          // this warp's P
  float* stw = reinterpret_cast<float*>(tc_smem + lay.stats) + warp * 16;    // its rows' alpha, then l

  // Q rows, head-major (row 16 w + r is tile row r of head h0 + w), times
  // the scale, rounded to T; pad rows are zero.
  for (int32_t i = static_cast<int32_t>(threadIdx.x); i < warps * 16 * hd; i += static_cast<int32_t>(blockDim.x)) {
    const int32_t m = i / hd, d = i % hd, r = m % 16;
    float x = 0.0f;
    if (r < tile.n)
      x = q[static_cast<int64_t>(tile.row + r) * q_stride + static_cast<int64_t>(h0 + m / 16) * hd + d] * s.scale;
    qs[m * ldh + d] = kv_from_float<T>(x);
  }

  // Which row each accumulator element holds: load a fragment of (i, j) -> i.
  for (int i = lane; i < 256; i += kWarpSize) sw[(i / 16) * kLds + i % 16] = static_cast<float>(i / 16);
  __syncwarp();
  int rows[kAccElems];
  {
    Acc map;
    wmma::load_matrix_sync(map, sw, kLds, wmma::mem_row_major);
#pragma unroll
    for (int e = 0; e < kAccElems; ++e) rows[e] = static_cast<int>(map.x[e]);
  }
  __syncwarp();

  Acc o[kFrags];
#pragma unroll
  for (int f = 0; f < kFrags; ++f) wmma::fill_fragment(o[f], 0.0f);

  // The softmax: lanes 2r and 2r + 1 share row r, 32 of the 64 keys each,
  // and keep identical copies of its running max and sum.
  const int r = lane / 2, side = lane % 2;
  const int32_t row_pos = tile.pos + r;
  const bool row_live = r < tile.n;
  float m_run = -FLT_MAX, l_run = 0.0f;

  const int32_t n_keys = tile.pos + tile.n;  // the last row sees every position before it
  const int chunks = hd / 8;                 // 16-byte pieces of a K or V row
  const int64_t v_off = static_cast<int64_t>(B) * g.kv_dim;
  const int64_t head_off = static_cast<int64_t>(kv_head) * hd;
  // On a sliding-window layer row r sees [row_first, row_pos]; key tiles
  // before the tile's first row's window are never loaded.
  const int32_t row_first = first_seen(s, row_pos);
  for (int32_t k0 = first_seen(s, tile.pos) / kKeys * kKeys; k0 < n_keys; k0 += kKeys) {
    __syncthreads();  // every warp is done with the previous K, V, S and P
    for (int32_t i = static_cast<int32_t>(threadIdx.x); i < kKeys * chunks; i += static_cast<int32_t>(blockDim.x)) {
      const int32_t j = i / chunks, c = i % chunks, p = k0 + j;
      uint4 kx = make_uint4(0u, 0u, 0u, 0u), vx = kx;  // past the context: zero, and masked below
      if (p < n_keys) {
        const T* at = pool + g.offset(table[p / B], layer, 0, p % B) + head_off + c * 8;
        kx = *reinterpret_cast<const uint4*>(at);
        vx = *reinterpret_cast<const uint4*>(at + v_off);
      }
      *reinterpret_cast<uint4*>(ks + j * ldh + c * 8) = kx;
      *reinterpret_cast<uint4*>(vs + j * ldh + c * 8) = vx;
    }
    __syncthreads();
    const int key_frags = min(kKeyFrags, (n_keys - k0 + 15) / 16);  // the rest are all in the future

    // S = Q K^T for this warp's 16 rows; K^T is K read column-major.
    {
      Acc sf[kKeyFrags];
#pragma unroll
      for (int kf = 0; kf < kKeyFrags; ++kf) wmma::fill_fragment(sf[kf], 0.0f);
      for (int d0 = 0; d0 < hd; d0 += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::load_matrix_sync(a, qs + warp * 16 * ldh + d0, ldh);
#pragma unroll
        for (int kf = 0; kf < kKeyFrags; ++kf)
          if (kf < key_frags) {
            wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b;
            wmma::load_matrix_sync(b, ks + kf * 16 * ldh + d0, ldh);
            wmma::mma_sync(sf[kf], a, b, sf[kf]);
          }
      }
#pragma unroll
      for (int kf = 0; kf < kKeyFrags; ++kf)
        if (kf < key_frags) wmma::store_matrix_sync(sw + kf * 16, sf[kf], kLds, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax of row r. A lane visits its 32 columns rotated by the
    // row (the set is the same), so the 32 lanes read 32 different banks.
    float* const srow = sw + r * kLds;
    const auto seen = [&](int c) { return row_live && k0 + c <= row_pos && k0 + c >= row_first; };
    if (s.softcap > 0)  // gemma 2, in place: each lane caps the columns it reads below
      for (int j = 0; j < 32; ++j) {
        const int c = side * 32 + ((j + 16 * side - 3 * r) & 31);
        srow[c] = soft_capped(s, srow[c]);
      }
    float mx = -FLT_MAX;
    for (int j = 0; j < 32; ++j) {
      const int c = side * 32 + ((j + 16 * side - 3 * r) & 31);
      if (seen(c)) mx = fmaxf(mx, srow[c]);
    }
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    const float m_new = fmaxf(m_run, mx);
    const float alpha = expf(m_run - m_new);  // 1 while the max stands; 0 before the first key
    T* prow = pw + r * kLdp;
    float sum = 0.0f;
    for (int j = 0; j < 32; ++j) {
      const int c = side * 32 + ((j + 16 * side - 3 * r) & 31);
      float w = 0.0f;
      if (seen(c)) w = expf(srow[c] - m_new);
      const T wt = kv_from_float<T>(w);
      prow[c] = wt;
      sum += kv_to_float(wt);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    l_run = l_run * alpha + sum;
    m_run = m_new;
    if (side == 0) stw[r] = alpha;
    __syncwarp();

    // O = alpha O + P V.
    float scale[kAccElems];
#pragma unroll
    for (int e = 0; e < kAccElems; ++e) scale[e] = stw[rows[e]];
#pragma unroll
    for (int f = 0; f < kFrags; ++f)
      if (f < nf) {
#pragma unroll
        for (int e = 0; e < kAccElems; ++e) o[f].x[e] *= scale[e];
      }
    for (int kf = 0; kf < key_frags; ++kf) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
      wmma::load_matrix_sync(a, pw + kf * 16, kLdp);
#pragma unroll
      for (int f = 0; f < kFrags; ++f)
        if (f < nf) {
          wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b;
          wmma::load_matrix_sync(b, vs + kf * 16 * ldh + f * 16, ldh);
          wmma::mma_sync(o[f], a, b, o[f]);
        }
    }
  }

  // O / l for the live rows, 64 columns at a time through this warp's S.
  __syncwarp();  // every lane has read its alphas
  if (side == 0) stw[r] = l_run;
  __syncwarp();
  float* orow0 = out + static_cast<int64_t>(tile.row) * out_stride + static_cast<int64_t>(h) * hd;
#pragma unroll
  for (int f = 0; f < kFrags; ++f)
    if (f < nf) {
      wmma::store_matrix_sync(sw + (f % 4) * 16, o[f], kLds, wmma::mem_row_major);
      if (f % 4 == 3 || f == nf - 1) {
        __syncwarp();
        const int c0 = (f / 4) * 64, cols = (f % 4 + 1) * 16;
        for (int i = lane; i < 16 * cols; i += kWarpSize) {
          const int rr = i / cols, c = i % cols;
          if (rr < tile.n) orow0[static_cast<int64_t>(rr) * out_stride + c0 + c] = sw[rr * kLds + c] / stw[rr];
        }
        __syncwarp();  // S is rewritten by the next fragments
      }
    }
}

template <typename T, int kFrags>
void launch(const KvPoolGeometry& g, const T* pool, int32_t layer, const AttentionShape& shape, const float* q,
            int64_t q_stride, float* out, int64_t out_stride, const PrefillTile* tiles, int32_t n_tiles,
            const int32_t* tables, cudaStream_t stream) {
  const int group = shape.n_heads / shape.n_kv_heads;
  int warps = 1;
  for (int w = std::min(group, kMaxWarps); w >= 1; --w)
    if (group % w == 0 && Layout(shape.head_dim, w).total <= kSharedBudget) {
      warps = w;
      break;
    }
  const size_t smem = Layout(shape.head_dim, warps).total;
  // Above 48 KiB a kernel must opt in to more shared memory.
  check(cudaFuncSetAttribute(prefill_kernel<T, kFrags>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem)),
        "prefill_attention: shared memory size");
  check(cudaFuncSetAttribute(prefill_kernel<T, kFrags>, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared),
        "prefill_attention: shared memory carveout");
  const dim3 grid(static_cast<unsigned>(n_tiles), static_cast<unsigned>(shape.n_heads / warps));
  prefill_kernel<T, kFrags><<<grid, warps * kWarpSize, smem, stream>>>(g, pool, layer, shape, q, q_stride, out,
                                                                      out_stride, tiles, tables);
}

}  // namespace tensor_core
}  // namespace

void prefill_attention(const KvPoolGeometry& g, KvType type, const void* pool, int32_t layer,
                       const AttentionShape& shape, const float* q, int64_t q_stride, float* out, int64_t out_stride,
                       const PrefillTile* tiles, int32_t n_tiles, const int32_t* tables, cudaStream_t stream) {
  if (n_tiles == 0) return;
  if (shape.head_dim > kMaxHeadDim) throw Error("prefill_attention: head_dim above 256");
  // The tensor-core kernel reads K/V rows in 16-byte pieces: head_dim a
  // multiple of 16 makes every row offset one, given an aligned pool.
  const bool tensor_cores = type != KvType::kF32 && shape.head_dim > 0 && shape.head_dim % 16 == 0 &&
                            reinterpret_cast<uintptr_t>(pool) % 16 == 0;
  dispatch_kv_type(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, float>) {
      if (tensor_cores) {
        const T* p = static_cast<const T*>(pool);
        if (shape.head_dim <= 64)
          tensor_core::launch<T, 4>(g, p, layer, shape, q, q_stride, out, out_stride, tiles, n_tiles, tables, stream);
        else if (shape.head_dim <= 128)
          tensor_core::launch<T, 8>(g, p, layer, shape, q, q_stride, out, out_stride, tiles, n_tiles, tables, stream);
        else
          tensor_core::launch<T, 16>(g, p, layer, shape, q, q_stride, out, out_stride, tiles, n_tiles, tables, stream);
        return;
      }
    }
    const size_t smem = cuda_core::shared_bytes(shape.head_dim);
    const dim3 grid(static_cast<unsigned>(n_tiles), static_cast<unsigned>(shape.n_heads));
    // Above 48 KiB (head_dim past 128) a kernel must opt in to more shared memory.
    check(cudaFuncSetAttribute(cuda_core::prefill_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(smem)),
          "prefill_attention: shared memory size");
    cuda_core::prefill_kernel<T><<<grid, cuda_core::kWarps * kWarpSize, smem, stream>>>(
        g, static_cast<const T*>(pool), layer, shape, q, q_stride, out, out_stride, tiles, tables);
  });
  check_launch("prefill_attention");
}

}  // namespace kvgate::cuda
