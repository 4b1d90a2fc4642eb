// The shape of a Llama-architecture model. Plain data, header-only: part of
// the Backend seam. Read from a GGUF file by model/gguf_config.h.
#pragma once

#include <cstdint>
#include <string>

namespace kvgate {

struct ModelConfig {
  std::string arch;        // "llama"
  std::string name;        // general.name, for display
  int32_t n_layers = 0;
  int32_t dim = 0;         // embedding width
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;  // < n_heads: grouped-query attention
  int32_t head_dim = 0;
  int32_t ffn_dim = 0;
  int32_t vocab_size = 0;
  int32_t context_length = 0;
  int32_t rope_dim = 0;    // leading dimensions of each head that RoPE rotates
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;

  int32_t kv_dim() const { return n_kv_heads * head_dim; }
  int32_t group_size() const { return n_heads / n_kv_heads; }
  // Weights of the transformer (embedding and output head included).
  int64_t parameter_count() const {
    const int64_t d = dim, kv = kv_dim(), ff = ffn_dim;
    const int64_t per_layer = 2 * d * d + 2 * d * kv + 3 * d * ff + 2 * d;
    return n_layers * per_layer + 2 * static_cast<int64_t>(vocab_size) * d + d;
  }
};

}  // namespace kvgate
