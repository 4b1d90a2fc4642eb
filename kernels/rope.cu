#include "kernels/rope.h"

#include <cmath>

#include "kernels/cuda_error.h"
#include "kernels/launch.cuh"

namespace kvgate::cuda {

RopeTableHost make_rope_table(int32_t max_pos, int32_t rope_dim, float base) {
  RopeTableHost t;
  t.half = rope_dim / 2;
  t.cos.resize(static_cast<size_t>(max_pos) * t.half);
  t.sin.resize(t.cos.size());
  for (int32_t p = 0; p < max_pos; ++p)
    for (int32_t i = 0; i < t.half; ++i) {
      // The CPU's RopeTable, expression for expression.
      const float freq = 1.0f / std::pow(base, static_cast<float>(2 * i) / static_cast<float>(rope_dim));
      const float angle = static_cast<float>(p) * freq;
      t.cos[static_cast<size_t>(p) * t.half + i] = std::cos(angle);
      t.sin[static_cast<size_t>(p) * t.half + i] = std::sin(angle);
    }
  return t;
}

namespace {

// One thread per (row, head, pair), over q's heads then k's.
__global__ void rope_kernel(RopeRows q, RopeRows k, const int32_t* pos, int64_t n, int32_t head_dim,
                            const float* cos, const float* sin, int32_t half) {
  const int32_t pairs = (q.n_heads + k.n_heads) * half;
  const int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= pairs) return;
  const int32_t head = j / half, i = j % half;
  const bool is_q = head < q.n_heads;
  const RopeRows& m = is_q ? q : k;
  for (int64_t r = blockIdx.y; r < n; r += gridDim.y) {
    float* v = m.x + r * m.stride + static_cast<int64_t>(is_q ? head : head - q.n_heads) * head_dim;
    const int64_t at = static_cast<int64_t>(pos[r]) * half + i;
    const float c = cos[at], s = sin[at];
    const float a = v[2 * i], b = v[2 * i + 1];
    // Separate roundings, as the CPU's (ISO C++, no contraction) does.
    v[2 * i] = __fsub_rn(__fmul_rn(a, c), __fmul_rn(b, s));
    v[2 * i + 1] = __fadd_rn(__fmul_rn(a, s), __fmul_rn(b, c));
  }
}

}  // namespace

void rope_rows(RopeRows q, RopeRows k, const int32_t* pos, int64_t n, int32_t head_dim, const float* cos,
               const float* sin, int32_t half, cudaStream_t stream) {
  if (n == 0 || half == 0) return;
  constexpr int kThreads = 128;
  const int32_t pairs = (q.n_heads + k.n_heads) * half;
  const dim3 grid(blocks_for(pairs, kThreads), grid_rows(n));
  rope_kernel<<<grid, kThreads, 0, stream>>>(q, k, pos, n, head_dim, cos, sin, half);
  check_launch("rope_rows");
}

}  // namespace kvgate::cuda
