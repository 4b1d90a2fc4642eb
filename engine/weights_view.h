// Where a Llama model's tensors are in host memory, in their stored types:
// how the weights cross the Backend seam to a backend that keeps its own
// copy of them (the CUDA backend in kernels/ uploads them to the device at
// construction and reads nothing of the host's afterwards). Plain data,
// header-only: part of the Backend seam. The registry fills it from the
// loaded model (engine/model/llama_weights.h), which kernels/ never sees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvgate {

// The ggml type ids of the storage types kvgate loads; the same values as
// engine/model/tensor_type.h's TensorType (the registry checks that they
// are). The block types' rows are runs of the blocks of
// engine/model/quant_blocks.h (Q8_0: one f16 scale and 32 int8s, 34
// bytes), which a backend reads in place.
enum class WeightType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kBF16 = 30,
};

// Values and bytes per block of a row in `type`: one value of its size for
// F32, F16 and BF16. Here rather than in engine/model/ because a backend
// behind the seam sizes rows by it (tests/kernels checks it against
// tensor_type_traits).
struct WeightBlock {
  int64_t values;
  int64_t bytes;
};
constexpr WeightBlock weight_block(WeightType type) {
  switch (type) {
    case WeightType::kF32: return {1, 4};
    case WeightType::kF16:
    case WeightType::kBF16: return {1, 2};
    case WeightType::kQ4_0: return {32, 18};
    case WeightType::kQ4_1: return {32, 20};
    case WeightType::kQ5_0: return {32, 22};
    case WeightType::kQ5_1: return {32, 24};
    case WeightType::kQ8_0: return {32, 34};
    case WeightType::kQ4_K: return {256, 144};
    case WeightType::kQ5_K: return {256, 176};
    case WeightType::kQ6_K: return {256, 210};
  }
  return {0, 0};
}
// Whether rows of `type` are blocks of several values (not F32, F16, BF16).
constexpr bool is_block_type(WeightType type) { return weight_block(type).values > 1; }
// Bytes of a dense row of `cols` values, cols a multiple of the block's values.
constexpr size_t dense_row_bytes(WeightType type, int64_t cols) {
  return static_cast<size_t>(cols / weight_block(type).values * weight_block(type).bytes);
}

// A row-major matrix: `rows` rows of `cols` values, `row_bytes` apart.
struct MatrixView {
  WeightType type = WeightType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_bytes = 0;
  const std::byte* data = nullptr;
  size_t bytes() const { return static_cast<size_t>(rows) * row_bytes; }
};

// The optional vectors are null when the family has none (always f32).
struct LayerWeightsView {
  const float* attn_norm = nullptr;  // [dim], always f32
  MatrixView wq, wk, wv, wo;
  const float* ffn_norm = nullptr;   // [dim]
  MatrixView w_gate, w_up, w_down;
  const float* bq = nullptr;              // [q_dim]: Q/K/V biases (qwen2; optional in llama)
  const float* bk = nullptr;              // [kv_dim]
  const float* bv = nullptr;              // [kv_dim]
  const float* q_norm = nullptr;          // [head_dim]: RMSNorm of each head before RoPE (qwen3, gemma3)
  const float* k_norm = nullptr;          // [head_dim]
  const float* attn_post_norm = nullptr;  // [dim]: RMSNorm of the attention output (gemma)
  const float* ffn_post_norm = nullptr;   // [dim]: RMSNorm of the FFN output (gemma)
};

struct WeightsView {
  MatrixView token_embd;             // [vocab][dim]
  const float* output_norm = nullptr;
  MatrixView output;                 // [vocab][dim]; the same bytes as token_embd when tied
  std::vector<LayerWeightsView> layers;
};

}  // namespace kvgate
