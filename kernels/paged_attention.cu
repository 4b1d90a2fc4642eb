// One thread block per (query, KV head, part of the context); a second
// kernel merges the parts (paged_attention.h says why both).
//
// The block walks its part in tiles of 32 positions staged in shared
// memory, two buffers deep: while one tile is scored, the next one's K and V
// rows are already on their way (cp.async, 16 bytes a copy), so even a lone
// block per SM keeps its reads in flight. Rows are gathered through the
// block table, a row per lane: each warp computes all 32 rows' addresses
// once per tile and hands them to the copying threads by shuffles, and the
// table entry is read a tile ahead so its latency hides under arithmetic.
//
// Each phase maps threads to the work that keeps its operands in registers:
//   scores  lane = position; warp w takes the 16-byte chunks w, w + 4, ...
//           of the row, widens each once and dots it with every query head
//           of the group (q in shared memory, read as broadcasts); the four
//           warps' partial dots are summed by the softmax.
//   softmax warp w owns heads w, w + 4, ...: its running maximum and sum
//           live in its registers, one warp reduction per head and tile.
//   values  a thread owns one 16-byte chunk of V's row for up to four heads
//           (so a widened chunk feeds four heads), and threads that would
//           otherwise idle take every J-th position; their partial sums are
//           added in the epilogue, in a fixed order (no atomics: the result
//           is the same every run).
// Shared-memory rows are padded to an odd number of 16-byte chunks, so 32
// lanes reading 32 rows at the same column hit different banks. A head_dim
// whose rows are not whole 16-byte chunks (or a misaligned pool) takes the
// same path with element-wise copies into zero-padded rows; the arithmetic
// never sees the difference.
//
// The context split is chosen on the host from the batch alone (never the
// positions: a captured CUDA graph replays the same grid); each block cuts
// its part from its own query's position, and a part that comes out empty
// writes l = 0, which the merge skips. With one part the kernel writes `out`
// itself and no merge runs.
#include "kernels/paged_attention.h"

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <string>

#include "kernels/cuda_error.h"
#include "kernels/kv_element.cuh"
#include "kernels/warp_reduce.cuh"

namespace kvgate::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * kWarpSize;
constexpr int kTile = kWarpSize;      // positions per staged tile: one per lane when scoring
constexpr int kChunkBytes = 16;       // one cp.async, one shared-memory vector load
constexpr int kHeadsPerThread = 4;    // query heads one thread accumulates per V chunk
constexpr int kSoftmaxHeads = kMaxDecodeGroup / kWarps;  // heads a warp owns in the softmax
constexpr unsigned kFullMask = 0xffffffffu;

// A 16-byte chunk of K or V widened to f32 registers.
template <typename T>
struct Chunk;
template <>
struct Chunk<float> {
  static constexpr int kElems = 4;
  static __device__ __forceinline__ void widen(const uint4& r, float* x) {
    x[0] = __uint_as_float(r.x), x[1] = __uint_as_float(r.y), x[2] = __uint_as_float(r.z), x[3] = __uint_as_float(r.w);
  }
};
template <>
struct Chunk<__nv_bfloat16> {
  static constexpr int kElems = 8;
  // A bf16 is the top half of an f32: widening is a shift, exactly __bfloat162float.
  static __device__ __forceinline__ void widen(const uint4& r, float* x) {
    const uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      x[2 * i] = __uint_as_float(w[i] << 16);
      x[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    }
  }
};
template <>
struct Chunk<__half> {
  static constexpr int kElems = 8;
  static __device__ __forceinline__ void widen(const uint4& r, float* x) {
    const uint32_t w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      x[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(w[i] & 0xffffu)));
      x[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(w[i] >> 16)));
    }
  }
};

// (head quad, chunk) items of the values pass one thread may own: with at
// most kMaxDecodeGroup heads and kMaxHeadDim dims there are at most
// 4 * 1024 / E items, so 8 / E per thread, 32 accumulators for every type.
template <typename T>
constexpr int kItemsPerThread = 8 / Chunk<T>::kElems;

// Global to shared, 16 bytes, bypassing L1 (each row is read once).
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  const auto to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(src) : "memory");
}
// Waits for every copy this thread issued (the caller then syncs the block
// to see everyone's).
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// The launch's arithmetic, computed once on the host (so the shared-memory
// size it asks for and the kernel's layout cannot disagree).
struct Tiling {
  int32_t group;         // G: query heads per KV head
  int32_t chunks;        // C: 16-byte chunks per K/V row, the row zero-padded to whole chunks
  int32_t row_bytes;     // a staged row's stride: C chunks, plus one when C is even (banks)
  int32_t region_bytes;  // two buffers of K and V tiles; the epilogue's scratch after the last tile
  int32_t items;         // NI: (head quad, chunk) items of the values pass
  int32_t item_threads;  // W = min(NI, kThreads): threads per stream of positions
  int32_t streams;       // J = kThreads / W: streams taking positions j, j + J, ...
  bool wide;             // rows are whole, aligned 16-byte chunks in the pool: cp.async

  // Dynamic shared memory: the region, q [G][C * E], partial scores [kWarps][G][kTile].
  size_t smem_bytes(int elems_per_chunk) const {
    return static_cast<size_t>(region_bytes) +
           sizeof(float) * (static_cast<size_t>(group) * chunks * elems_per_chunk +
                            static_cast<size_t>(kWarps) * group * kTile);
  }
};

// Where the parts' partial results go: acc [n][n_heads][S][head_dim]
// (unnormalised), m and l [n][n_heads][S]. acc == nullptr: one part, the
// kernel writes `out` itself.
struct Partials {
  float* acc;
  float* m;
  float* l;
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    decode_kernel(KvPoolGeometry geo, const T* pool, int32_t layer, AttentionShape s, Tiling t, const float* q,
                  int64_t q_stride, float* out, int64_t out_stride, const DecodeQuery* queries, const int32_t* tables,
                  Partials part) {
  constexpr int E = Chunk<T>::kElems;
  constexpr int kItems = kItemsPerThread<T>;
  extern __shared__ uint4 smem[];
  __shared__ float alpha_s[kMaxDecodeGroup], m_s[kMaxDecodeGroup], l_s[kMaxDecodeGroup];

  const int tid = threadIdx.x, warp = tid / kWarpSize, lane = tid % kWarpSize;
  const int G = t.group, C = t.chunks, CE = C * E, hd = s.head_dim, B = geo.block_size;
  unsigned char* const region = reinterpret_cast<unsigned char*>(smem);
  float* const qs = reinterpret_cast<float*>(region + t.region_bytes);  // [G][CE], scaled, zero past hd
  float* const sp = qs + G * CE;  // [kWarps][G][kTile] partial scores; [0][G][kTile] then the weights
  const auto k_tile = [&](int buf) { return region + (2 * buf) * kTile * t.row_bytes; };
  const auto v_tile = [&](int buf) { return region + (2 * buf + 1) * kTile * t.row_bytes; };

  // This block's part of the context [first, pos] (first = 0 but on a
  // sliding-window layer): parts of ceil((pos + 1 - first) / S) positions,
  // so the last ones may be short or empty. Positions before the window are
  // never read, so the window costs nothing and needs no mask.
  const int32_t qi = blockIdx.x, kv_head = blockIdx.y, split = blockIdx.z, n_splits = gridDim.z;
  const DecodeQuery dq = queries[qi];
  const DecodePart part_range = decode_part(s, dq.pos, split, n_splits);
  const int32_t begin = part_range.begin, end = part_range.end;
  const int32_t n_tiles = (end - begin + kTile - 1) / kTile;
  const auto tile_rows = [&](int32_t tile) { return min(kTile, end - begin - tile * kTile); };

  const float* qg = q + static_cast<int64_t>(dq.row) * q_stride + static_cast<int64_t>(kv_head) * G * hd;
  for (int i = tid; i < G * CE; i += kThreads) {
    const int g = i / CE, d = i - g * CE;
    qs[i] = d < hd ? qg[static_cast<int64_t>(g) * hd + d] * s.scale : 0.0f;
  }

  // Staging: lane j of every warp computes row j's element offset; copying
  // threads fetch the offsets they need by shuffles.
  const int32_t* table = tables + dq.table;
  const int64_t head_off = static_cast<int64_t>(kv_head) * hd;
  const int64_t v_off = static_cast<int64_t>(B) * geo.kv_dim;  // V follows K in the block (kv_pool_geometry.h)
  const auto block_of = [&](int32_t tile) {
    const int32_t p = begin + tile * kTile + lane;
    return p < end ? table[p / B] : 0;
  };
  const int copy_c = tid % C, copy_j0 = tid / C, rows_per_pass = kThreads / C;  // wide path: C <= 64
  const auto load_tile = [&](int32_t tile, int buf, int32_t blk) {
    const int32_t p = begin + tile * kTile + lane, rows = tile_rows(tile);
    const int64_t row = p < end ? geo.offset(blk, layer, 0, p % B) + head_off : 0;
    unsigned char* const kd = k_tile(buf);
    unsigned char* const vd = v_tile(buf);
    if (t.wide) {
      for (int jb = 0; jb < kTile; jb += rows_per_pass) {
        const int j = jb + copy_j0;
        const int64_t r = __shfl_sync(kFullMask, row, j & (kWarpSize - 1));
        if (copy_j0 < rows_per_pass && j < rows) {
          cp_async16(kd + j * t.row_bytes + copy_c * kChunkBytes, pool + r + copy_c * E);
          cp_async16(vd + j * t.row_bytes + copy_c * kChunkBytes, pool + r + v_off + copy_c * E);
        }
      }
    } else {
      const T zero = kv_from_float<T>(0.0f);
      for (int j = warp; j < kTile; j += kWarps) {
        const int64_t r = __shfl_sync(kFullMask, row, j);
        if (j >= rows) break;  // warp-uniform
        T* const kr = reinterpret_cast<T*>(kd + j * t.row_bytes);
        T* const vr = reinterpret_cast<T*>(vd + j * t.row_bytes);
        for (int d = lane; d < CE; d += kWarpSize) {
          kr[d] = d < hd ? pool[r + d] : zero;
          vr[d] = d < hd ? pool[r + v_off + d] : zero;
        }
      }
    }
  };

  // The values pass's items: quad item_quad[k] of heads, chunk item_c[k],
  // positions stream, stream + J, ...
  const int stream = tid / t.item_threads;
  int item_quad[kItems], item_c[kItems];
  bool item_on[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const int i = tid % t.item_threads + k * t.item_threads;
    item_on[k] = stream < t.streams && i < t.items;
    item_quad[k] = i / C, item_c[k] = i % C;
  }

  float m[kSoftmaxHeads], l[kSoftmaxHeads];  // heads warp + kWarps * k
#pragma unroll
  for (int k = 0; k < kSoftmaxHeads; ++k) m[k] = -FLT_MAX, l[k] = 0.0f;
  float acc[kItems][kHeadsPerThread][E] = {};

  int32_t next_blk = 0;
  if (n_tiles > 0) load_tile(0, 0, block_of(0));
  if (n_tiles > 1) next_blk = block_of(1);
  for (int32_t tile = 0; tile < n_tiles; ++tile) {
    const int buf = tile & 1;
    const int rows = tile_rows(tile);
    // The tile has landed, q is in place, and every thread is done with the
    // previous tile: its buffer and the weights may be overwritten.
    cp_async_wait_all();
    __syncthreads();
    if (tile + 1 < n_tiles) {
      load_tile(tile + 1, buf ^ 1, next_blk);
      if (tile + 2 < n_tiles) next_blk = block_of(tile + 2);
    }

    // Scores: this warp's chunks of row `lane` against every head.
    {
      float dot[kMaxDecodeGroup] = {};
      if (lane < rows) {
        const unsigned char* const kr = k_tile(buf) + lane * t.row_bytes;
        for (int c = warp; c < C; c += kWarps) {
          float kx[E];
          Chunk<T>::widen(*reinterpret_cast<const uint4*>(kr + c * kChunkBytes), kx);
#pragma unroll
          for (int g = 0; g < kMaxDecodeGroup; ++g) {
            if (g >= G) break;
            const float4* qc = reinterpret_cast<const float4*>(qs + g * CE + c * E);
#pragma unroll
            for (int e = 0; e < E; e += 4) {
              const float4 qv = qc[e / 4];
              dot[g] += qv.x * kx[e] + qv.y * kx[e + 1] + qv.z * kx[e + 2] + qv.w * kx[e + 3];
            }
          }
        }
      }
      float* const spw = sp + warp * G * kTile;
#pragma unroll
      for (int g = 0; g < kMaxDecodeGroup; ++g)
        if (g < G) spw[g * kTile + lane] = dot[g];
    }
    __syncthreads();

    // Online softmax, a warp per head: rescale factor alpha for what was
    // accumulated so far, weights for this tile's positions.
#pragma unroll
    for (int k = 0; k < kSoftmaxHeads; ++k) {
      const int g = warp + kWarps * k;
      if (g >= G) break;  // warp-uniform
      const bool valid = lane < rows;
      float score = -FLT_MAX;
      if (valid) {
        score = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) score += sp[(w * G + g) * kTile + lane];
        score = soft_capped(s, score);  // gemma 2; the scale is already in q
      }
      const float m_new = fmaxf(m[k], warp_max(score));
      const float alpha = expf(m[k] - m_new);
      const float p = valid ? expf(score - m_new) : 0.0f;
      l[k] = l[k] * alpha + warp_sum(p);
      m[k] = m_new;
      sp[g * kTile + lane] = p;  // the lane read its own partials above: no other thread touches these
      if (lane == 0) alpha_s[g] = alpha;
    }
    __syncthreads();

    // Values: acc = acc * alpha + sum_j p_j V_j over this stream's positions.
    if (stream < t.streams) {
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        if (!item_on[k]) continue;
#pragma unroll
        for (int h = 0; h < kHeadsPerThread; ++h) {
          const int g = item_quad[k] * kHeadsPerThread + h;
          if (g >= G) break;
          const float a = alpha_s[g];
#pragma unroll
          for (int e = 0; e < E; ++e) acc[k][h][e] *= a;
        }
      }
      const unsigned char* const vt = v_tile(buf);
      for (int j = stream; j < rows; j += t.streams) {
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
          if (!item_on[k]) continue;
          float vx[E];
          Chunk<T>::widen(*reinterpret_cast<const uint4*>(vt + j * t.row_bytes + item_c[k] * kChunkBytes), vx);
#pragma unroll
          for (int h = 0; h < kHeadsPerThread; ++h) {
            const int g = item_quad[k] * kHeadsPerThread + h;
            if (g >= G) break;
            const float p = sp[g * kTile + j];
#pragma unroll
            for (int e = 0; e < E; ++e) acc[k][h][e] += p * vx[e];
          }
        }
      }
    }
  }

  // Epilogue. An empty part gets here with m = -FLT_MAX, l = 0, acc = 0.
#pragma unroll
  for (int k = 0; k < kSoftmaxHeads; ++k) {
    const int g = warp + kWarps * k;
    if (g < G && lane == 0) m_s[g] = m[k], l_s[g] = l[k];
  }
  __syncthreads();  // the last tile is read: the region becomes scratch [J][4][E][NI]
  float* const scratch = reinterpret_cast<float*>(region);
  const int NI = t.items;
  if (stream < t.streams) {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (!item_on[k]) continue;
      const int item = tid % t.item_threads + k * t.item_threads;
#pragma unroll
      for (int h = 0; h < kHeadsPerThread; ++h)
#pragma unroll
        for (int e = 0; e < E; ++e) scratch[((stream * kHeadsPerThread + h) * E + e) * NI + item] = acc[k][h][e];
    }
  }
  __syncthreads();

  const int32_t H = s.n_heads, head0 = kv_head * G;
  const int64_t part_row = (static_cast<int64_t>(qi) * H + head0) * n_splits + split;  // (qi, head0, split)
  for (int i = tid; i < G * hd; i += kThreads) {
    const int g = i / hd, d = i - g * hd;
    const int item = (g / kHeadsPerThread) * C + d / E, h = g % kHeadsPerThread, e = d % E;
    float sum = 0.0f;
    for (int j = 0; j < t.streams; ++j) sum += scratch[((j * kHeadsPerThread + h) * E + e) * NI + item];
    if (part.acc == nullptr)
      out[static_cast<int64_t>(dq.row) * out_stride + static_cast<int64_t>(head0 + g) * hd + d] = sum / l_s[g];
    else
      part.acc[(part_row + static_cast<int64_t>(g) * n_splits) * hd + d] = sum;
  }
  if (part.acc != nullptr && tid < G) {
    part.m[part_row + static_cast<int64_t>(tid) * n_splits] = m_s[tid];
    part.l[part_row + static_cast<int64_t>(tid) * n_splits] = l_s[tid];
  }
}

// One block per (query, head): the parts' results rescaled to their common
// maximum, out = sum_s acc_s e^(m_s - M) / sum_s l_s e^(m_s - M). Warp 0
// computes the parts' weights (S <= 32, a lane each); empty parts (l = 0)
// weigh nothing and their acc is not read.
__global__ void __launch_bounds__(kThreads)
    merge_kernel(Partials part, int32_t n_heads, int32_t hd, int32_t n_splits, const DecodeQuery* queries,
                 float* out, int64_t out_stride) {
  __shared__ float weight[kMaxDecodeSplits];
  const int32_t qi = blockIdx.x, h = blockIdx.y;
  const int64_t base = (static_cast<int64_t>(qi) * n_heads + h) * n_splits;  // (qi, h, split 0)
  if (threadIdx.x < kWarpSize) {
    const int sp = threadIdx.x;
    const float l = sp < n_splits ? part.l[base + sp] : 0.0f;
    const float m = l > 0.0f ? part.m[base + sp] : -FLT_MAX;
    const float mx = warp_max(m);
    const float f = l > 0.0f ? expf(m - mx) : 0.0f;
    const float total = warp_sum(l * f);  // > 0: part 0 is never empty
    if (sp < n_splits) weight[sp] = f / total;
  }
  __syncthreads();
  float* const o = out + static_cast<int64_t>(queries[qi].row) * out_stride + static_cast<int64_t>(h) * hd;
  for (int d = threadIdx.x; d < hd; d += kThreads) {
    float sum = 0.0f;
    for (int sp = 0; sp < n_splits; ++sp)
      if (weight[sp] > 0.0f) sum += weight[sp] * part.acc[(base + sp) * hd + d];
    o[d] = sum;
  }
}

template <typename T>
Tiling tiling_for(const AttentionShape& s, const void* pool) {
  constexpr int E = Chunk<T>::kElems;
  Tiling t{};
  t.group = s.n_heads / s.n_kv_heads;
  t.chunks = (s.head_dim + E - 1) / E;
  t.row_bytes = (t.chunks + (t.chunks % 2 == 0 ? 1 : 0)) * kChunkBytes;
  t.items = (t.group + kHeadsPerThread - 1) / kHeadsPerThread * t.chunks;
  t.item_threads = std::min(t.items, kThreads);
  t.streams = kThreads / t.item_threads;
  const int32_t tiles = 2 * 2 * kTile * t.row_bytes;
  const auto scratch = static_cast<int32_t>(t.streams * t.items * kHeadsPerThread * E * sizeof(float));
  t.region_bytes = std::max(tiles, scratch);
  t.wide = (static_cast<size_t>(s.head_dim) * sizeof(T)) % kChunkBytes == 0 &&
           reinterpret_cast<uintptr_t>(pool) % kChunkBytes == 0;
  // Holds for every shape check_shape lets through; kept as a guard on the
  // accumulator arrays' size.
  if (t.items > kThreads * kItemsPerThread<T>) throw Error("paged_decode_attention: too many values items per block");
  return t;
}

void check_shape(const AttentionShape& s) {
  if (s.head_dim <= 0 || s.head_dim > kMaxHeadDim)
    throw Error("paged_decode_attention: head_dim " + std::to_string(s.head_dim) + " is outside [1, 256]");
  if (s.n_kv_heads <= 0 || s.n_heads <= 0 || s.n_heads % s.n_kv_heads != 0)
    throw Error("paged_decode_attention: " + std::to_string(s.n_heads) + " query heads do not group over " +
                std::to_string(s.n_kv_heads) + " KV heads");
  if (const int32_t group = s.n_heads / s.n_kv_heads; group > kMaxDecodeGroup)
    throw Error("paged_decode_attention: " + std::to_string(group) +
                " query heads per KV head, above the kernel's " + std::to_string(kMaxDecodeGroup) +
                " (kMaxDecodeGroup)");
}

// Above 48 KiB of shared memory (head_dim 256, or a large group) a kernel
// must opt in. Done once, for the most any shape can ask, so that no later
// launch makes the call: the backend captures decode steps in CUDA graphs.
constexpr size_t kDefaultSharedBytes = 48 * 1024;
template <typename T>
void allow_large_shared_memory() {
  static const bool once = [] {
    const AttentionShape widest{kMaxDecodeGroup, 1, kMaxHeadDim, 1.0f};
    const size_t most = tiling_for<T>(widest, nullptr).smem_bytes(Chunk<T>::kElems);
    check(cudaFuncSetAttribute(decode_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(most)),
          "paged_decode_attention: shared memory size");
    return true;
  }();
  (void)once;
}

// The device's SM count, read once per process: every later split decision
// uses the same number, so a workspace sized earlier fits a launch later.
int sm_count() {
  static const int sms = [] {
    int device = 0, n = 0;
    check(cudaGetDevice(&device), "paged_decode_attention: cudaGetDevice");
    check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device),
          "paged_decode_attention: the SM count");
    return n;
  }();
  return sms;
}

}  // namespace

int32_t paged_decode_splits(const AttentionShape& shape, int32_t n) {
  const int64_t blocks = static_cast<int64_t>(n) * shape.n_kv_heads;
  const int64_t wanted = 2 * static_cast<int64_t>(sm_count());
  if (blocks <= 0 || blocks >= wanted) return 1;
  return static_cast<int32_t>(std::min<int64_t>(kMaxDecodeSplits, (wanted + blocks - 1) / blocks));
}

size_t paged_decode_workspace_bytes(const AttentionShape& shape, int32_t n) {
  const int32_t splits = paged_decode_splits(shape, n);
  if (splits == 1 || n <= 0) return 0;
  return static_cast<size_t>(n) * shape.n_heads * splits * (shape.head_dim + 2) * sizeof(float);
}

void paged_decode_attention(const KvPoolGeometry& g, KvType type, const void* pool, int32_t layer,
                            const AttentionShape& shape, const float* q, int64_t q_stride, float* out,
                            int64_t out_stride, const DecodeQuery* queries, int32_t n, const int32_t* tables,
                            void* workspace, cudaStream_t stream) {
  if (n == 0) return;
  check_shape(shape);
  const int32_t splits = paged_decode_splits(shape, n);
  Partials part{nullptr, nullptr, nullptr};
  if (splits > 1) {
    if (workspace == nullptr)
      throw Error("paged_decode_attention: " + std::to_string(splits) +
                  " context splits need a workspace of paged_decode_workspace_bytes");
    const int64_t rows = static_cast<int64_t>(n) * shape.n_heads * splits;
    part.acc = static_cast<float*>(workspace);
    part.m = part.acc + rows * shape.head_dim;
    part.l = part.m + rows;
  }
  const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(shape.n_kv_heads), static_cast<unsigned>(splits));
  dispatch_kv_type(type, [&](auto tag) {
    using T = decltype(tag);
    const Tiling t = tiling_for<T>(shape, pool);
    const size_t smem = t.smem_bytes(Chunk<T>::kElems);
    if (smem > kDefaultSharedBytes) allow_large_shared_memory<T>();
    decode_kernel<T><<<grid, kThreads, smem, stream>>>(g, static_cast<const T*>(pool), layer, shape, t, q, q_stride,
                                                       out, out_stride, queries, tables, part);
  });
  check_launch("paged_decode_attention");
  if (splits > 1) {
    const dim3 merge_grid(static_cast<unsigned>(n), static_cast<unsigned>(shape.n_heads));
    merge_kernel<<<merge_grid, kThreads, 0, stream>>>(part, shape.n_heads, shape.head_dim, splits, queries, out,
                                                      out_stride);
    check_launch("paged_decode_attention: merge");
  }
}

}  // namespace kvgate::cuda
