// Reading a ModelConfig out of GGUF metadata; pure, any thread.
//
// The rule: a model kvgate cannot compute exactly is refused, never served
// approximately. So every key under the architecture's prefix is either
// read here, known not to change the arithmetic, or the load fails naming
// it; the tensors get the same accounting in llama_weights.cpp.
#include "engine/model/gguf_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "base/error.h"
#include "engine/model/gguf.h"
#include "engine/model/model_family.h"

namespace kvgate {
namespace {

// Keys under "<arch>." that read_model_config uses.
constexpr std::array<std::string_view, 14> kUsedKeys{
    "context_length",        "embedding_length",    "block_count",
    "feed_forward_length",   "attention.head_count", "attention.head_count_kv",
    "attention.key_length",  "attention.value_length", "attention.layer_norm_rms_epsilon",
    "rope.dimension_count",  "rope.freq_base",      "rope.scaling.type",
    "rope.scaling.factor",   "rope.scale_linear",
};
// Keys under "<arch>." that do not change what a forward pass computes:
// the vocabulary size is the tokenizer's; original_context_length matters
// to YaRN only (refused below); finetuned is a note about training.
constexpr std::array<std::string_view, 3> kInertKeys{"vocab_size", "rope.scaling.original_context_length",
                                                    "rope.scaling.finetuned"};
// Keys that are inert at zero and a different model otherwise.
constexpr std::array<std::string_view, 2> kZeroKeys{"expert_count", "expert_used_count"};

template <size_t N>
bool one_of(const std::array<std::string_view, N>& set, std::string_view k) {
  return std::find(set.begin(), set.end(), k) != set.end();
}

int32_t positive_i32(const GgufFile& f, const std::string& key, uint64_t v) {
  if (v == 0 || v > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) / 4)
    throw Error(f.source() + ": metadata key '" + key + "' = " + std::to_string(v) + " is out of range");
  return static_cast<int32_t>(v);
}

// Every "<arch>.*" key is used, inert or refused.
void account_for_keys(const GgufFile& f, const Family& fam, const std::string& prefix) {
  for (const auto& [key, value] : f.metadata()) {
    if (!key.starts_with(prefix)) continue;
    const std::string_view k = std::string_view(key).substr(prefix.size());
    if (one_of(kUsedKeys, k) || one_of(kInertKeys, k) || fam.takes_key(k)) continue;
    if (one_of(kZeroKeys, k) && f.get_uint(key) == 0) continue;
    throw Error(f.source() + ": metadata key '" + key +
                "' is not supported: kvgate does not compute what it changes, and refuses the model rather "
                "than serve it approximately");
  }
}

// As llama.cpp reads it: with type none nothing scales; with linear (also
// when the type is absent) the factor (rope.scaling.factor, or the older
// rope.scale_linear) divides every angle; with yarn (llama, qwen2, qwen3)
// it does so blended by frequency against the original context. Other
// types (LongRoPE as a type, su) are refused.
void read_rope_scaling(const GgufFile& f, const Family& fam, const std::string& p, ModelConfig& c) {
  const std::string type = f.optional_string(p + "rope.scaling.type").value_or("linear");
  if (type != "none" && type != "linear" && type != "yarn")
    throw Error(f.source() + ": " + p + "rope.scaling.type '" + type + "' is not supported (none, linear, yarn)");
  if (type == "yarn" && fam.variant != Variant::kPlain)
    throw Error(f.source() + ": " + p + "rope.scaling.type 'yarn' is not supported for " + c.arch +
                " (llama, qwen2, qwen3)");
  std::optional<double> factor = f.optional_float(p + "rope.scaling.factor");
  if (!factor) factor = f.optional_float(p + "rope.scale_linear");
  if (type == "none" || !factor || *factor == 0) return;
  if (!(*factor >= 1.0) || !std::isfinite(*factor))
    throw Error(f.source() + ": " + p + "rope.scaling.factor must be a number >= 1, got " + std::to_string(*factor));
  c.rope_freq_scale = static_cast<float>(1.0 / *factor);
  if (type == "yarn") {
    c.rope_yarn = true;
    c.rope_yarn_original_context = static_cast<int32_t>(
        std::min<uint64_t>(f.optional_uint(p + "rope.scaling.original_context_length").value_or(c.context_length),
                           std::numeric_limits<int32_t>::max()));
    if (c.rope_yarn_original_context <= 0)
      throw Error(f.source() + ": " + p + "rope.scaling.original_context_length must be positive for yarn");
  }
}

}  // namespace

ModelConfig read_model_config(const GgufFile& f) {
  ModelConfig c;
  c.arch = f.optional_string("general.architecture").value_or("");
  if (c.arch.empty()) throw Error(f.source() + ": general.architecture is missing (is this a model file?)");
  const Family& fam = family_of(f, c.arch);
  c.name = f.optional_string("general.name").value_or(c.arch);
  const std::string p = c.arch + ".";
  account_for_keys(f, fam, p);
  auto req = [&](const char* k) { return positive_i32(f, p + k, f.get_uint(p + k)); };
  c.n_layers = req("block_count");
  c.dim = req("embedding_length");
  c.n_heads = req("attention.head_count");
  c.n_kv_heads = f.has(p + "attention.head_count_kv") ? req("attention.head_count_kv") : c.n_heads;
  c.ffn_dim = req("feed_forward_length");
  c.context_length = req("context_length");
  if (c.n_heads % c.n_kv_heads != 0)
    throw Error(f.source() + ": head_count " + std::to_string(c.n_heads) + " is not a multiple of head_count_kv " +
                std::to_string(c.n_kv_heads));
  if (f.has(p + "attention.key_length")) {
    c.head_dim = req("attention.key_length");
  } else if (c.dim % c.n_heads == 0) {
    c.head_dim = c.dim / c.n_heads;
  } else {
    throw Error(f.source() + ": embedding_length " + std::to_string(c.dim) + " is not divisible by head_count " +
                std::to_string(c.n_heads) + " and attention.key_length is missing");
  }
  if (f.has(p + "attention.value_length") && req("attention.value_length") != c.head_dim)
    throw Error(f.source() + ": attention.value_length differs from attention.key_length (not supported)");
  c.rope_dim = f.has(p + "rope.dimension_count") ? req("rope.dimension_count") : c.head_dim;
  if (c.rope_dim > c.head_dim || c.rope_dim % 2 != 0)
    throw Error(f.source() + ": rope.dimension_count " + std::to_string(c.rope_dim) +
                " must be even and at most the head dimension " + std::to_string(c.head_dim));
  c.rope_base = static_cast<float>(f.optional_float(p + "rope.freq_base").value_or(10000.0));
  c.rms_eps = static_cast<float>(f.optional_float(p + "attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (!(c.rope_base > 0) || !(c.rms_eps > 0))
    throw Error(f.source() + ": rope.freq_base and layer_norm_rms_epsilon must be positive");
  read_rope_scaling(f, fam, p, c);
  read_family_config(f, fam, p, c);
  c.qkv_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  if (f.has("tokenizer.ggml.tokens")) {
    c.vocab_size = static_cast<int32_t>(f.get_array("tokenizer.ggml.tokens").size());
  } else if (const auto* t = f.find_tensor("token_embd.weight"); t && t->dims.size() == 2) {
    c.vocab_size = static_cast<int32_t>(t->dims[1]);
  }
  if (c.vocab_size <= 0) throw Error(f.source() + ": cannot tell the vocabulary size (no tokenizer.ggml.tokens)");
  return c;
}

std::vector<std::string> tensors_read_into_config(const GgufFile& f, const ModelConfig& c) {
  std::vector<std::string> names;
  for (const char* n : {"rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight"})
    if (!c.rope_freq_factors.empty() && f.find_tensor(n)) names.emplace_back(n);
  return names;
}

}  // namespace kvgate
