// The shape and arithmetic of a decoder-only transformer of the Llama kind
// (llama, qwen2, qwen3, gemma2, gemma3, phi3). Plain data, header-only: part of the Backend seam.
// Read from a GGUF file by model/gguf_config.h, which refuses any key it
// cannot honour, so every field here is something each backend computes or
// refuses.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace kvgate {

// How RoPE pairs a head's values: llama.cpp's rope types. kAdjacent turns
// (x[2i], x[2i+1]) ("normal": llama, whose converter permutes Q and K to
// suit); kHalves turns (x[i], x[i + rope_dim/2]) ("neox": qwen2, qwen3).
enum class RopeStyle { kAdjacent, kHalves };

// The gated feed-forward's activation: SiLU (SwiGLU) or GELU with the tanh
// approximation (GeGLU: gemma).
enum class Activation { kSilu, kGeluTanh };

struct ModelConfig {
  std::string arch;        // general.architecture: llama, qwen2, qwen3, gemma2, gemma3, phi3
  std::string name;        // general.name, for display
  int32_t n_layers = 0;
  int32_t dim = 0;         // embedding width
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;  // < n_heads: grouped-query attention
  int32_t head_dim = 0;    // attention.key_length, else dim / n_heads
  int32_t ffn_dim = 0;
  int32_t vocab_size = 0;
  int32_t context_length = 0;
  int32_t rope_dim = 0;    // leading dimensions of each head that RoPE rotates
  float rope_base = 10000.0f;
  RopeStyle rope_style = RopeStyle::kAdjacent;
  // Linear RoPE scaling (rope.scaling.type linear): angles times 1/factor.
  float rope_freq_scale = 1.0f;
  // YaRN (rope.scaling.type yarn): the scale above applies fully to pairs
  // whose wavelength is long against this original context and not at all
  // to short ones, blended between (llama.cpp's beta_fast 32, beta_slow 1),
  // and every cosine and sine grows by 1 + 0.1 ln(factor).
  bool rope_yarn = false;
  int32_t rope_yarn_original_context = 0;
  // rope_freqs.weight (Llama 3.1 and later) or LongRoPE's factors (phi3):
  // pair i's angle is divided by factor i. Empty when the model has none.
  // rope_dim / 2 values.
  std::vector<float> rope_freq_factors;
  // LongRoPE (phi3): the factors above are its long or short set, and every
  // cosine and sine is multiplied by this.
  float rope_attn_factor = 1.0f;
  float rms_eps = 1e-5f;
  bool qkv_bias = false;   // Q, K and V projections add a bias (qwen2)
  bool qk_norm = false;    // RMSNorm over each head of Q and K before RoPE (qwen3, gemma3)
  bool fused_gate_up = false;  // one ffn_up tensor holds the gate's rows, then up's (phi3)
  // gemma: the embedding scaled by sqrt(dim), GeGLU, RMSNorm after
  // attention and after the FFN (before each residual add), soft-capping
  // of attention scores and of the logits (cap * tanh(x / cap); 0: none).
  float embed_scale = 1.0f;
  Activation ffn_activation = Activation::kSilu;
  bool post_norms = false;
  float attn_scale = 0.0f;  // the scores' scale; 0: 1 / sqrt(head_dim)
  float attn_softcap = 0.0f;
  float final_softcap = 0.0f;
  // Sliding-window layers attend to the last sliding_window positions only
  // (their own included); layer l slides when l % sliding_pattern <
  // sliding_pattern - 1 (every layer when the pattern is 0), llama.cpp's
  // rule. They turn RoPE by their own base and scale.
  int32_t sliding_window = 0;  // 0: no layer slides
  int32_t sliding_pattern = 0;
  float rope_base_swa = 10000.0f;
  float rope_freq_scale_swa = 1.0f;

  bool is_sliding(int32_t layer) const {
    return sliding_window > 0 && (sliding_pattern == 0 || layer % sliding_pattern < sliding_pattern - 1);
  }
  float attention_scale() const { return attn_scale > 0 ? attn_scale : 1.0f / std::sqrt(static_cast<float>(head_dim)); }

  int32_t q_dim() const { return n_heads * head_dim; }  // may differ from dim (qwen3, Mistral Nemo)
  int32_t kv_dim() const { return n_kv_heads * head_dim; }
  int32_t group_size() const { return n_heads / n_kv_heads; }
  // Weights of the transformer (embedding and output head included).
  int64_t parameter_count() const {
    const int64_t d = dim, q = q_dim(), kv = kv_dim(), ff = ffn_dim;
    const int64_t per_layer = 2 * d * q + 2 * d * kv + 3 * d * ff + 2 * d;
    return n_layers * per_layer + 2 * static_cast<int64_t>(vocab_size) * d + d;
  }
};

}  // namespace kvgate
