// Block-quantized weights (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)
// times a few f32 activation rows: the decode GEMM of a quantized model,
// reading the weights in their stored blocks (0.56 bytes a weight for
// Q4_0 and Q4_K, 0.82 for Q6_K) instead of a widened f32 copy's 4.
//
// The Q8_0 mat-vec (q8_0_matvec.h) generalised to a per-type block decode:
// a lane widens 8 neighbouring weights of a block at a time with
// block_values.h (the host's dequantization, bit for bit; the lane's share
// is quant_matvec_piece.h, which the host tests run) and multiplies
// them in f32 into f32 accumulators, so the result differs from the CPU's
// f32 matmul on the same weights widened only in the order of the sums.
// Activations stay f32, as in the Q8_0 mat-vec (llama.cpp's MMVQ quantizes
// them to q8_1 for int8 dot products; this keeps the backend's f32 parity).
//
// Not yet tuned: no device has run it. It does not stage the weights
// through shared memory as q8_0_matvec does (cp.async, 16-byte copies):
// the blocks' sizes (18 to 210 bytes) make an aligned staging chunk per
// type, and that tuning wants a device to measure on. A warp's lanes read
// neighbouring bytes, so each of its loads is a few contiguous sectors, but
// a byte at a time (a row's blocks are only 2-byte aligned): about two
// load instructions per weight and row, which may bound it below the
// memory's speed at one activation row. Until measured, kernels/gemm.h
// still sends Q8_0 to the tuned q8_0_matvec and every other block type
// here.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/weights_view.h"

namespace kvgate::cuda {

// The most activation rows one launch takes: as q8_0_matvec's (the same
// register budget: 2 weight rows x n accumulators per thread).
inline constexpr int64_t kQuantMatvecMaxRows = 8;

// True when quant_matvec takes x: rows of f32 16-byte aligned (cols is a
// multiple of 32, so every row then is).
inline bool quant_matvec_aligned(const float* x) { return reinterpret_cast<uintptr_t>(x) % 16 == 0; }

// y[t][r] = beta * y[t][r] + sum_c x[t][c] * w[r][c] for t < n, r < rows:
// w is `rows` rows of `cols` weights in `type` (a block type; cols a
// multiple of its block's values), `row_bytes` apart (at least
// dense_row_bytes; any address); x is n rows of cols floats, contiguous,
// 16-byte aligned; y rows are ldy floats apart. beta 0 does not read y.
// 1 <= n <= kQuantMatvecMaxRows. Allocates nothing (can be captured in a
// CUDA graph). Throws kvgate::Error before launching for arguments outside
// these.
void quant_matvec(WeightType type, const void* w, size_t row_bytes, int64_t rows, int64_t cols, const float* x,
                  int64_t n, float* y, int64_t ldy, float beta, cudaStream_t stream);

}  // namespace kvgate::cuda
