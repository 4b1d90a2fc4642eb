// One lane's share of a step of quant_matvec's kernel (quant_matvec.cu):
// 8 neighbouring weights of each of its weight rows widened as the host
// widens them, multiplied into every activation row. Host and device, so
// that tests/kernels/quant_matvec_emulation_test.cpp runs the kernel's
// walk over a row on the host, lane by lane, where CI has no GPU.
#pragma once

#include <cmath>
#include <cstdint>

#include "engine/weights_view.h"
#include "kernels/block_values.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define KVGATE_PIECE_FN __host__ __device__ __forceinline__
#else
#define KVGATE_PIECE_FN inline
#endif

namespace kvgate::cuda {

// A lane widens kMatvecPiece neighbouring weights of one block per step: 8
// divides every sub-block (16 or 32 values) and block, so a piece shares
// one scale (Codec::scale) and never straddles two blocks, and its 8
// activations are two 16-byte loads. A warp's step covers kMatvecStep
// columns: 8 blocks of the 32-value types, one k-quant block.
inline constexpr int kMatvecPiece = 8;
inline constexpr int kMatvecLanes = 32;
inline constexpr int kMatvecStep = kMatvecLanes * kMatvecPiece;

// The first column of lane `lane`'s piece in step `step` of a row. A row is
// whole blocks, so a piece is wholly in it or wholly past it.
KVGATE_PIECE_FN int64_t piece_column(int64_t step, int lane) {
  return step * kMatvecStep + static_cast<int64_t>(lane) * kMatvecPiece;
}

// acc[r][t] += sum over the piece's columns c0 .. c0 + 7 of w[r][c] x[t][c],
// one fused multiply-add per weight in column order; w[r] is the row at
// src[r] in T's blocks, x rows are `cols` floats apart and 16-byte aligned.
template <WeightType T, int R, int N>
KVGATE_PIECE_FN void accumulate_piece(const unsigned char* const (&src)[R], const float* x, int64_t cols, int64_t c0,
                                      float (&acc)[R][N]) {
  using C = block_values::Codec<T>;
  static_assert(C::kValues % kMatvecPiece == 0);
  const int64_t block = c0 / C::kValues;
  const int j0 = static_cast<int>(c0 % C::kValues);
  float w[R][kMatvecPiece];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int r = 0; r < R; ++r) {
    const unsigned char* b = src[r] + block * C::kBytes;
    const typename C::Scale s = C::scale(b, j0);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int v = 0; v < kMatvecPiece; ++v) w[r][v] = C::value(b, s, j0 + v);
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int t = 0; t < N; ++t) {
    const float* xs = x + t * cols + c0;
#if defined(__CUDA_ARCH__)
    const float4 lo = __ldg(reinterpret_cast<const float4*>(xs)), hi = __ldg(reinterpret_cast<const float4*>(xs) + 1);
    const float xv[kMatvecPiece] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int v = 0; v < kMatvecPiece; ++v) acc[r][t] = __fmaf_rn(w[r][v], xv[v], acc[r][t]);
#else
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < kMatvecPiece; ++v) acc[r][t] = std::fma(w[r][v], xs[v], acc[r][t]);
#endif
  }
}

}  // namespace kvgate::cuda

#undef KVGATE_PIECE_FN
