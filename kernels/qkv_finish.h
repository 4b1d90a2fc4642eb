// What follows the fused Q/K/V projection before RoPE, in the CPU's order
// (engine/cpu/cpu_backend.cpp, finish_q / finish_kv): the Q, K and V biases
// added (qwen2; llama files may have them), then an RMSNorm over each head
// of Q and of K, times the head-sized weight (qwen3, gemma3's q_norm and
// k_norm). One pass over the row instead of a GEMM epilogue: cuBLAS's
// bias epilogues are cuBLASLt-only and the f32 and block-type paths (gemm.h) do
// not go through it, and the norm needs every value of a head anyway.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/rope_kv_store.h"

namespace kvgate::cuda {

// For r < n, on rows.x + r * rows.stride = [q (n_heads heads) | k (n_kv_heads)
// | v (n_kv_heads)], heads head_dim wide: += bias (q_dim + 2 kv_dim values,
// or null: none), then each q head <- rmsnorm(head) * q_norm and each k
// head <- rmsnorm(head) * k_norm (both null: none; both or neither).
void qkv_finish(QkvRows rows, int32_t n_kv_heads, int64_t n, const float* bias, const float* q_norm,
                const float* k_norm, float eps, cudaStream_t stream);

}  // namespace kvgate::cuda
