// Rotary position embedding, llama.cpp's "normal" RoPE as the CPU applies it
// (engine/cpu/rowwise.h): adjacent pairs (x[2i], x[2i+1]) of each head's
// first rope_dim values turn by pos * base^(-2i/rope_dim). The angles'
// cosines and sines are a table made on the host by the same f32 formula as
// the CPU's RopeTable, so both backends rotate by the same numbers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace kvgate::cuda {

struct RopeTableHost {
  int32_t half = 0;             // rope_dim / 2
  std::vector<float> cos, sin;  // [max_pos][half]
};
RopeTableHost make_rope_table(int32_t max_pos, int32_t rope_dim, float base);

struct RopeRows {
  float* x;          // row r's heads start at x + r * stride
  int64_t stride;
  int32_t n_heads;
};

// Rotates q's and k's heads of rows r < n at position pos[r], in place.
// cos and sin are the table on the device.
void rope_rows(RopeRows q, RopeRows k, const int32_t* pos, int64_t n, int32_t head_dim, const float* cos,
               const float* sin, int32_t half, cudaStream_t stream);

}  // namespace kvgate::cuda
