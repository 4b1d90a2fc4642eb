// The shape of a Llama-architecture model, read from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>

namespace kvgate {

class GgufFile;

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

  // Reads and validates llama.* metadata; throws kvgate::Error naming the
  // key or the inconsistency (e.g. heads not dividing dim).
  static ModelConfig from_gguf(const GgufFile& f);

  int32_t kv_dim() const { return n_kv_heads * head_dim; }
  int32_t group_size() const { return n_heads / n_kv_heads; }
  // 2 (K and V) x layers x kv_heads x head_dim x bytes per element.
  int64_t kv_bytes_per_token(int64_t bytes_per_element) const {
    return 2LL * n_layers * n_kv_heads * head_dim * bytes_per_element;
  }
  // Weights of the transformer (embedding and output head included).
  int64_t parameter_count() const;
};

}  // namespace kvgate
