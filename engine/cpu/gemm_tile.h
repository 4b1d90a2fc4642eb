// The kernels under matmul for few activation rows: decode, alone or
// batched, with weights read in their stored type.
//
// A batch (gemm_rows) keeps a tile of accumulators (weight rows x
// activation rows) in registers: each weight load, widened from its stored
// type in the register, feeds every activation row of the tile, and each
// activation load every weight row; at batch 8 and above that keeps the FMA
// ports busy. Batch 1 (gemv_rows) is bound by bandwidth and streams one
// weight row at a time.
//
// Two builds of the batched kernel: AVX2 (the x86-64-v3 baseline) and
// AVX-512 (F, BW, DQ, VL, VNNI), in their own translation units; matmul
// picks one with cpu_has_avx512().
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/llama_weights.h"

namespace kvgate {

// How far ahead of their loads the AVX-512 tile and both Q8_0 batch-1 loops
// prefetch weight rows. The hardware prefetcher alone left a 3-row tile at
// 6 GB/s on Zen 4; this distance (tried: 512, 1024, 2048, 4096) took batch 8
// from 25 to 17 ms of CPU for the 110M model's F16 layers. Q8_0 at batch 1
// spent its time on each block's first load without it: with it, 2.70-2.74
// against 2.82-3.07 ms per token on Zen 5 (2,048 and 8,192 bytes: no better).
inline constexpr int kPrefetchBytes = 4096;

// Batch n >= 2: y[t * w.rows + r] = w_r . x_t for weight rows r in
// [r0, r1) and activation rows t < n (x is [n][w.cols]). Weight rows are
// read in place and widened in registers, but for Q8_0 in the AVX2 build,
// which widens them a tile at a time into a small thread-local buffer.
void gemm_rows_avx2(const Matrix& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y);
void gemm_rows_avx512(const Matrix& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y);

// One activation row quantized as Q8_0 is: int8 values in [-127, 127] with
// one f32 scale per 32. Q8_0 weights at batch 1 are then int8 dot products,
// as llama.cpp does them: a Q8_0 row is half the bytes of F16, and widening
// it to f32 costs more instructions than the bandwidth it saves.
//
// The other block types take quantized activations too, as llama.cpp
// quantizes them, so that the arithmetic is comparable: per 32 for Q4_0 to
// Q5_1 (its Q8_0 and Q8_1), per 256 for the k-quants (its Q8_K: one scale
// for the super-block, from the value of largest magnitude with its sign).
// Their weights are stored unsigned or with an offset (Q4_0's q - 8, Q4_K's
// d * sc * q - dmin * m), so their dot products need the sums of x's int8s
// as well: per 16 (Q6_K's sub-blocks), and so per 32.
struct QuantizedRow {
  int64_t block = 0;  // values per scale: 32 or 256
  std::vector<int8_t> q;
  std::vector<float> scale;
  std::vector<int16_t> sum16;  // sum of q[16g, 16g + 16)
};
void quantize_row_q8(const float* x, int64_t cols, QuantizedRow& out);    // per 32; cols a multiple of 32
void quantize_row_q8_k(const float* x, int64_t cols, QuantizedRow& out);  // per 256; cols a multiple of 256
// Whether `type`'s dot products take quantize_row_q8_k's activations.
inline bool takes_q8_k(TensorType type) {
  return type == TensorType::Q4_K || type == TensorType::Q5_K || type == TensorType::Q6_K;
}

// Batch 1: y[r] = w_r . x for rows r in [r0, r1), one row at a time with
// four accumulators. On Zen 4 one sequential stream per thread reached
// about twice the bandwidth of rows read side by side, and these AVX2 loads
// beat an AVX-512 build of the same loop (measured, docs/benchmarks.md), so
// F32, F16 and BF16 rows have one build. Q8_0 rows use xq, x quantized by
// quantize_row_q8, and have two: gemv_q8_avx512 where the CPU has AVX-512
// (VNNI's vpdpbusd sums four int8 products a lane, two blocks a register;
// four blocks' scales converted and multiplied as one vector), else
// gemv_q8_avx2.
void gemv_rows(const Matrix& w, int64_t r0, int64_t r1, const float* x, const QuantizedRow& xq, float* y);
void gemv_q8_avx2(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y);
void gemv_q8_avx512(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y);
// Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K rows against xq (per 256 for
// the k-quants): each 32 values' unsigned weights times x's int8s
// (vpmaddubsw), scaled per 32.
void gemv_blocks_avx2(const Matrix& w, int64_t r0, int64_t r1, const QuantizedRow& xq, float* y);

}  // namespace kvgate
