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
#include "engine/model/float_convert.h"
#include "engine/model/gguf.h"

namespace kvgate {
namespace {

// The families of the Llama kind and how they differ: llama.cpp's
// src/models/{llama,qwen2,qwen3,gemma2,gemma3,phi3}.cpp.
enum class Variant { kPlain, kGemma2, kGemma3, kPhi3 };
struct Family {
  std::string_view arch;
  RopeStyle rope;
  bool qk_norm;     // attn_q_norm / attn_k_norm in every layer
  bool rope_freqs;  // may carry rope_freqs.weight (Llama 3.1 and later)
  Variant variant;
};
constexpr std::array<Family, 6> kFamilies{{
    {"llama", RopeStyle::kAdjacent, false, true, Variant::kPlain},
    {"qwen2", RopeStyle::kHalves, false, false, Variant::kPlain},
    {"qwen3", RopeStyle::kHalves, true, false, Variant::kPlain},
    {"gemma2", RopeStyle::kHalves, false, false, Variant::kGemma2},
    {"gemma3", RopeStyle::kHalves, true, false, Variant::kGemma3},
    {"phi3", RopeStyle::kHalves, false, false, Variant::kPhi3},
}};

// Keys under "<arch>." that read_model_config uses.
constexpr std::array<std::string_view, 14> kUsedKeys{
    "context_length",        "embedding_length",    "block_count",
    "feed_forward_length",   "attention.head_count", "attention.head_count_kv",
    "attention.key_length",  "attention.value_length", "attention.layer_norm_rms_epsilon",
    "rope.dimension_count",  "rope.freq_base",      "rope.scaling.type",
    "rope.scaling.factor",   "rope.scale_linear",
};
// And those of gemma 2 (all four) and gemma 3 (all but the attention's
// soft-capping, which llama.cpp does not apply to it).
constexpr std::array<std::string_view, 5> kGemmaKeys{"attention.sliding_window", "attention.sliding_window_pattern",
                                                    "rope.freq_base_swa", "final_logit_softcapping",
                                                    "attn_logit_softcapping"};
// And phi3's: its window (every layer) and LongRoPE's magnitude scale.
constexpr std::array<std::string_view, 2> kPhi3Keys{"attention.sliding_window", "rope.scaling.attn_factor"};
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

const Family& family_of(const GgufFile& f, const std::string& arch) {
  for (const Family& fam : kFamilies)
    if (fam.arch == arch) return fam;
  throw Error(f.source() + ": unsupported architecture '" + arch +
              "' (kvgate runs llama, qwen2, qwen3, gemma2, gemma3 and phi3)");
}

bool family_key(const Family& fam, std::string_view k) {
  switch (fam.variant) {
    case Variant::kPlain: return false;
    case Variant::kGemma2: return one_of(kGemmaKeys, k);
    case Variant::kGemma3: return one_of(kGemmaKeys, k) && k != "attn_logit_softcapping";
    case Variant::kPhi3: return one_of(kPhi3Keys, k);
  }
  return false;
}

// Every "<arch>.*" key is used, inert or refused.
void account_for_keys(const GgufFile& f, const Family& fam, const std::string& prefix) {
  for (const auto& [key, value] : f.metadata()) {
    if (!key.starts_with(prefix)) continue;
    const std::string_view k = std::string_view(key).substr(prefix.size());
    if (one_of(kUsedKeys, k) || one_of(kInertKeys, k) || family_key(fam, k)) continue;
    if (one_of(kZeroKeys, k) && f.get_uint(key) == 0) continue;
    throw Error(f.source() + ": metadata key '" + key +
                "' is not supported: kvgate does not compute what it changes, and refuses the model rather "
                "than serve it approximately");
  }
}

// As llama.cpp reads it: the factor (rope.scaling.factor, or the older
// rope.scale_linear) scales every angle unless the type is one kvgate
// does not compute (YaRN, LongRoPE), which is refused.
void read_rope_scaling(const GgufFile& f, const std::string& p, ModelConfig& c) {
  const std::string type = f.optional_string(p + "rope.scaling.type").value_or("linear");
  if (type != "none" && type != "linear")
    throw Error(f.source() + ": " + p + "rope.scaling.type '" + type + "' is not supported (none, linear)");
  std::optional<double> factor = f.optional_float(p + "rope.scaling.factor");
  if (!factor) factor = f.optional_float(p + "rope.scale_linear");
  if (!factor || *factor == 0) return;
  if (!(*factor >= 1.0) || !std::isfinite(*factor))
    throw Error(f.source() + ": " + p + "rope.scaling.factor must be a number >= 1, got " + std::to_string(*factor));
  c.rope_freq_scale = static_cast<float>(1.0 / *factor);
}

float positive_float(const GgufFile& f, const std::string& key, double fallback) {
  const double v = f.optional_float(key).value_or(fallback);
  if (!(v > 0) || !std::isfinite(v))
    throw Error(f.source() + ": metadata key '" + key + "' must be a positive number, got " + std::to_string(v));
  return static_cast<float>(v);
}

// Gemma 2 and 3, as llama.cpp computes them: the embedding times sqrt(dim),
// GeGLU, norms after attention and FFN, the query scale from the head size
// (from dim / heads in the 27B shapes, which llama.cpp knows by their layer
// count), soft-capping (gemma 2), and sliding-window layers: gemma 2 every
// other one (window 4096 unless stated), gemma 3 five in six, with their
// own RoPE base (10,000 unless stated) and no RoPE scaling.
void read_gemma(const GgufFile& f, const Family& fam, const std::string& p, ModelConfig& c) {
  c.embed_scale = std::sqrt(static_cast<float>(c.dim));
  c.ffn_activation = Activation::kGeluTanh;
  c.post_norms = true;
  const bool is_27b = c.n_layers == (fam.variant == Variant::kGemma2 ? 46 : 62);
  c.attn_scale = 1.0f / std::sqrt(static_cast<float>(is_27b ? c.dim / c.n_heads : c.head_dim));
  auto window = [&](uint64_t fallback) {
    const uint64_t w = f.optional_uint(p + "attention.sliding_window").value_or(fallback);
    if (w > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      throw Error(f.source() + ": " + p + "attention.sliding_window is out of range");
    return static_cast<int32_t>(w);
  };
  auto pattern = [&](uint64_t fallback) {
    const uint64_t n = f.optional_uint(p + "attention.sliding_window_pattern").value_or(fallback);
    if (n > 1024) throw Error(f.source() + ": " + p + "attention.sliding_window_pattern is out of range");
    return static_cast<int32_t>(n);
  };
  if (fam.variant == Variant::kGemma2) {
    c.sliding_window = window(4096);
    c.sliding_pattern = pattern(2);
    c.attn_softcap = positive_float(f, p + "attn_logit_softcapping", 50.0);
    c.final_softcap = positive_float(f, p + "final_logit_softcapping", 30.0);
    c.rope_base_swa = positive_float(f, p + "rope.freq_base_swa", c.rope_base);
    c.rope_freq_scale_swa = c.rope_freq_scale;
  } else {
    c.sliding_window = window(0);
    c.sliding_pattern = pattern(6);
    if (f.has(p + "final_logit_softcapping")) c.final_softcap = positive_float(f, p + "final_logit_softcapping", 0);
    c.rope_base_swa = positive_float(f, p + "rope.freq_base_swa", 10000.0);
    c.rope_freq_scale_swa = 1.0f;
  }
}

// A per-pair RoPE factor tensor of rope_dim / 2 positive values.
std::vector<float> rope_factor_tensor(const GgufFile& f, const std::string& name, const ModelConfig& c) {
  const int64_t half = c.rope_dim / 2;
  const int64_t dims[] = {half};
  const GgufTensor& t = f.tensor(name, dims);
  std::vector<float> v(static_cast<size_t>(half));
  dequantize_row(t.type, t.data, v.data(), half);
  for (float x : v)
    if (!(x > 0) || !std::isfinite(x))
      throw Error(f.source() + ": tensor '" + name + "' holds a factor that is not a positive number");
  return v;
}

// rope_freqs.weight: a divisor per RoPE pair, the same for every layer.
void read_rope_freqs(const GgufFile& f, const Family& fam, ModelConfig& c) {
  if (!f.find_tensor("rope_freqs.weight")) return;
  if (!fam.rope_freqs)
    throw Error(f.source() + ": tensor 'rope_freqs.weight' is not part of the " + c.arch + " architecture");
  c.rope_freq_factors = rope_factor_tensor(f, "rope_freqs.weight", c);
}

// Phi-3: every layer slides when the file gives a window (as the model was
// trained; llama.cpp ignores the window today, so the two agree only within
// it), and LongRoPE: the long factors when the context kvgate serves
// exceeds the original one, else the short ones, chosen once as llama.cpp
// does (per sequence, a growing sequence would change its cached K), with
// the magnitude scale (attn_factor) on every cosine and sine.
void read_phi3(const GgufFile& f, const std::string& p, ModelConfig& c) {
  c.fused_gate_up = true;
  if (const auto w = f.optional_uint(p + "attention.sliding_window"); w && *w > 0) {
    if (*w > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      throw Error(f.source() + ": " + p + "attention.sliding_window is out of range");
    c.sliding_window = static_cast<int32_t>(*w);
    c.sliding_pattern = 0;
    c.rope_base_swa = c.rope_base;
    c.rope_freq_scale_swa = c.rope_freq_scale;
  }
  const bool has_long = f.find_tensor("rope_factors_long.weight"), has_short = f.find_tensor("rope_factors_short.weight");
  if (has_long != has_short)
    throw Error(f.source() + ": LongRoPE needs both rope_factors_long.weight and rope_factors_short.weight");
  if (!has_long) return;
  const uint64_t original = f.optional_uint(p + "rope.scaling.original_context_length").value_or(c.context_length);
  const bool long_context = static_cast<uint64_t>(c.context_length) > original;
  c.rope_freq_factors =
      rope_factor_tensor(f, long_context ? "rope_factors_long.weight" : "rope_factors_short.weight", c);
  c.rope_attn_factor = positive_float(f, p + "rope.scaling.attn_factor", 1.0);
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
  c.rope_style = fam.rope;
  read_rope_scaling(f, p, c);
  read_rope_freqs(f, fam, c);
  c.qk_norm = fam.qk_norm;
  if (fam.variant == Variant::kGemma2 || fam.variant == Variant::kGemma3) read_gemma(f, fam, p, c);
  if (fam.variant == Variant::kPhi3) read_phi3(f, p, c);
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
