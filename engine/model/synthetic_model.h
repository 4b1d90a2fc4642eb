// Synthetic models of the Llama kind (llama, qwen2, qwen3, gemma2, gemma3,
// phi3): random weights
// of any shape, a real vocabulary.
// Backs `kvgate mkmodel`, so benchmarks can run 110M- or 1B-shaped models
// that nobody has to download. The outputs are noise, but every byte the
// engine reads (shapes, types, tokenizer) is the same as in a real model.
//
// Weights are uniform with variance 1/in_width (ne0), so each matrix keeps
// activations O(1) and logits stay spread out enough for sampling to be
// non-trivial. Norm weights are 1 plus a little noise. Every row is seeded
// from (seed, tensor, row), so the bytes depend on the seed alone, not on
// the thread count, and rows are generated in parallel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/tensor_type.h"

namespace kvgate {

struct SyntheticModelSpec {
  // llama, qwen2 (Q/K/V biases), qwen3 (Q/K norms), gemma2 (post norms,
  // soft-capping, tied output), gemma3 (gemma2's less the soft-capping,
  // plus Q/K norms), phi3 (fused Q/K/V and gate/up)
  std::string arch = "llama";
  int32_t sliding_window = 0;  // gemma, phi3: attention.sliding_window (0: the family's default, or none)
  // phi3 (fused Q/K/V and gate/up): > 0 adds LongRoPE, long and short
  // factor sets for contexts past this original one, and its attn_factor.
  int32_t longrope_original_context = 0;
  int32_t layers = 0, dim = 0, heads = 0, kv_heads = 0, ffn = 0;
  int32_t head_dim = 0;        // 0: dim / heads; else written as attention.key_length
  // Writes rope_freqs.weight with Llama 3.1's factors (factor 8, low 1,
  // high 4, original context 8192), as its converter does (llama only).
  bool llama3_rope_freqs = false;
  float rope_linear_factor = 0;  // > 0: rope.scaling.type linear with this factor
  float rope_yarn_factor = 0;    // > 0: rope.scaling.type yarn with this factor ...
  int32_t rope_original_context = 0;  // ... over this original context (rope.scaling.original_context_length)
  int32_t context = 2048;
  float rope_base = 10000;
  float rms_eps = 1e-5f;
  TensorType type = TensorType::F32;  // of the matrices; norms are always F32
  bool k_quant_medium = false;        // with Q4_K or Q5_K: the _M mixture (quant_mix.h)
  uint64_t seed = 1;
  std::string vocab_from;  // a GGUF whose tokenizer.* metadata is copied (required)
  // What a real model's converter adds to a borrowed vocabulary, so a test
  // model can carry a real family's chat template and its markup tokens
  // (Qwen's <|im_start|> on GPT-2's vocabulary, say):
  std::string chat_template;                // non-empty: tokenizer.chat_template, replacing a copied one
  std::vector<std::string> control_tokens;  // appended as control tokens (type 3) unless already in the vocabulary
  std::vector<std::string> user_tokens;     // appended as user-defined tokens (type 4), likewise
  std::string bos_token, eos_token;         // non-empty: tokenizer.ggml.{bos,eos}_token_id of the token with this text
};

// Throws kvgate::Error naming the field when the spec cannot make a model.
void validate(const SyntheticModelSpec& spec);

// Validates, then writes a GGUF v3 model to `path`, generating one
// tensor at a time while streaming it to the file.
void write_synthetic_model(const SyntheticModelSpec& spec, const std::string& path);

}  // namespace kvgate
