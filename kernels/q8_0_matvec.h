// Q8_0 weights times a few f32 activation rows: the decode GEMM of a Q8_0
// model, reading the weights in their stored 34/32 bytes per weight instead
// of a widened f32 copy's 4.
//
// Decode is a stream over the weights: at n rows a weight costs 1.0625
// bytes and 2n flops. Each weight block is read once per launch for all n
// rows, widened exactly as the host widens it (d * q in f32: with an f16 d
// and an int8 q the product is exact, so the device's weights are the
// CPU's bit for bit), and multiplied in f32 with f32 accumulation, so the
// result differs from the CPU's f32 matmul on the same matrix only in the
// order of the sums. Activations stay f32: unlike llama.cpp's MMVQ, which
// quantizes them to q8_1 for int8 dot products, this keeps the backend's
// f32 parity.
//
// kernels/gemm.h routes a Q8_0 matrix here, in passes of up to
// kQ8_0MatvecMaxRows rows, for up to kBlockPassedRows rows, and widens it
// for cuBLAS above that.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kvgate::cuda {

// The most activation rows one launch takes: an estimate until measured on
// the device (kvgate_gpu_bench's Q8_0 decode at 8 and 16 rows: one pass
// and two). At n
// rows a weight costs 1.0625 bytes and 2n flops, plus its widening (a byte
// permute, an add, a multiply) once per launch. At n = 8 that is 15 flop
// per byte, the H200's ridge point on its CUDA cores (67 TFLOP/s of f32
// over 4.8 TB/s: 14): past it the kernel no longer runs at the memory's
// speed, every row adds its FMAs and an activation load per 4 weights
// (cuBLAS's register-tiled SGEMM reuses each activation across many weight
// rows instead), and the kernel's registers grow with the 2n accumulators
// (80 per thread at 8, against 40 at 1). llama.cpp stops its quantized
// mat-vec kernels at the same 8 rows (MMVQ_MAX_BATCH_SIZE).
inline constexpr int64_t kQ8_0MatvecMaxRows = 8;

// True when q8_0_matvec takes x: rows of f32 16-byte aligned (cols is a
// multiple of 32, so every row then is).
inline bool q8_0_matvec_aligned(const float* x) { return reinterpret_cast<uintptr_t>(x) % 16 == 0; }

// y[t][r] = beta * y[t][r] + sum_c x[t][c] * w[r][c] for t < n, r < rows:
// w is `rows` Q8_0 rows of `cols` weights (a multiple of 32), `row_bytes`
// apart (at least cols / 32 * 34; any even address); x is n rows of cols
// floats, contiguous, 16-byte aligned; y rows are ldy floats apart. beta 0
// does not read y. 1 <= n <= kQ8_0MatvecMaxRows. Allocates nothing (can be
// captured in a CUDA graph). Throws kvgate::Error before launching for
// arguments outside these.
void q8_0_matvec(const void* w, size_t row_bytes, int64_t rows, int64_t cols, const float* x, int64_t n, float* y,
                 int64_t ldy, float beta, cudaStream_t stream);

}  // namespace kvgate::cuda
