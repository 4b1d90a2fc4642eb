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
// are). Q8_0 rows are blocks of one f16 scale and 32 int8s (34 bytes).
enum class WeightType : uint32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30 };

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
