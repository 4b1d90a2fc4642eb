// Reading a ModelConfig out of GGUF metadata; pure, any thread.
#include "engine/model/gguf_config.h"

#include <limits>

#include "base/error.h"
#include "engine/model/gguf.h"

namespace kvgate {
namespace {

int32_t positive_i32(const GgufFile& f, const std::string& key, uint64_t v) {
  if (v == 0 || v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) / 4)
    throw Error(f.source() + ": metadata key '" + key + "' = " + std::to_string(v) + " is out of range");
  return static_cast<int32_t>(v);
}

}  // namespace

ModelConfig read_model_config(const GgufFile& f) {
  ModelConfig c;
  c.arch = f.optional_string("general.architecture").value_or("");
  if (c.arch.empty()) throw Error(f.source() + ": general.architecture is missing (is this a model file?)");
  if (c.arch != "llama")
    throw Error(f.source() + ": unsupported architecture '" + c.arch + "' (kvgate runs llama-architecture models)");
  c.name = f.optional_string("general.name").value_or(c.arch);
  const std::string p = c.arch + ".";
  auto req = [&](const char* k) { return positive_i32(f, p + k, f.get_uint(p + k)); };
  c.n_layers = req("block_count");
  c.dim = req("embedding_length");
  c.n_heads = req("attention.head_count");
  c.n_kv_heads = f.has(p + "attention.head_count_kv") ? req("attention.head_count_kv") : c.n_heads;
  c.ffn_dim = req("feed_forward_length");
  c.context_length = req("context_length");
  if (c.dim % c.n_heads != 0)
    throw Error(f.source() + ": embedding_length " + std::to_string(c.dim) + " is not divisible by head_count " +
                std::to_string(c.n_heads));
  if (c.n_heads % c.n_kv_heads != 0)
    throw Error(f.source() + ": head_count " + std::to_string(c.n_heads) + " is not a multiple of head_count_kv " +
                std::to_string(c.n_kv_heads));
  c.head_dim = c.dim / c.n_heads;
  if (auto kl = f.optional_uint(p + "attention.key_length"); kl && *kl != static_cast<uint64_t>(c.head_dim))
    throw Error(f.source() + ": attention.key_length differs from embedding_length / head_count (unsupported)");
  c.rope_dim = f.has(p + "rope.dimension_count") ? req("rope.dimension_count") : c.head_dim;
  if (c.rope_dim > c.head_dim || c.rope_dim % 2 != 0)
    throw Error(f.source() + ": rope.dimension_count " + std::to_string(c.rope_dim) +
                " must be even and at most the head dimension " + std::to_string(c.head_dim));
  c.rope_base = static_cast<float>(f.optional_float(p + "rope.freq_base").value_or(10000.0));
  c.rms_eps = static_cast<float>(f.optional_float(p + "attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (!(c.rope_base > 0) || !(c.rms_eps > 0))
    throw Error(f.source() + ": rope.freq_base and layer_norm_rms_epsilon must be positive");
  if (f.optional_string(p + "rope.scaling.type").value_or("none") != "none")
    throw Error(f.source() + ": RoPE scaling is not supported yet");
  if (f.has("tokenizer.ggml.tokens")) {
    c.vocab_size = static_cast<int32_t>(f.get_array("tokenizer.ggml.tokens").size());
  } else if (const auto* t = f.find_tensor("token_embd.weight"); t && t->dims.size() == 2) {
    c.vocab_size = static_cast<int32_t>(t->dims[1]);
  }
  if (c.vocab_size <= 0) throw Error(f.source() + ": cannot tell the vocabulary size (no tokenizer.ggml.tokens)");
  return c;
}

}  // namespace kvgate
