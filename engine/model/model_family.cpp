// What each family adds to the common config: model_family.h.
#include "engine/model/model_family.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "engine/model/float_convert.h"
#include "engine/model/gguf.h"

namespace kvgate {
namespace {

constexpr std::array<Family, 6> kFamilies{{
    {"llama", RopeStyle::kAdjacent, false, true, Variant::kPlain},
    {"qwen2", RopeStyle::kHalves, false, false, Variant::kPlain},
    {"qwen3", RopeStyle::kHalves, true, false, Variant::kPlain},
    {"gemma2", RopeStyle::kHalves, false, false, Variant::kGemma2},
    {"gemma3", RopeStyle::kHalves, true, false, Variant::kGemma3},
    {"phi3", RopeStyle::kHalves, false, false, Variant::kPhi3},
}};

// The keys gemma 2 reads beyond the common ones; gemma 3 all but the
// attention's soft-capping, which llama.cpp does not apply to it.
constexpr std::array<std::string_view, 5> kGemmaKeys{"attention.sliding_window", "attention.sliding_window_pattern",
                                                    "rope.freq_base_swa", "final_logit_softcapping",
                                                    "attn_logit_softcapping"};
// And phi3's: its window (every layer) and LongRoPE's magnitude scale.
constexpr std::array<std::string_view, 2> kPhi3Keys{"attention.sliding_window", "rope.scaling.attn_factor"};
constexpr uint64_t kMaxWindow = std::numeric_limits<int32_t>::max();

// An optional unsigned key that must fit `max`.
int32_t uint_key(const GgufFile& f, const std::string& key, uint64_t fallback, uint64_t max) {
  const uint64_t v = f.optional_uint(key).value_or(fallback);
  if (v > max) throw Error(f.source() + ": metadata key '" + key + "' = " + std::to_string(v) + " is out of range");
  return static_cast<int32_t>(v);
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
  auto window = [&](uint64_t fallback) { return uint_key(f, p + "attention.sliding_window", fallback, kMaxWindow); };
  auto pattern = [&](uint64_t fallback) { return uint_key(f, p + "attention.sliding_window_pattern", fallback, 1024); };
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
  if (const int32_t w = uint_key(f, p + "attention.sliding_window", 0, kMaxWindow); w > 0) {
    c.sliding_window = w;
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

bool Family::takes_key(std::string_view k) const {
  switch (variant) {
    case Variant::kPlain: return false;
    case Variant::kGemma2: return std::ranges::find(kGemmaKeys, k) != kGemmaKeys.end();
    case Variant::kGemma3: return std::ranges::find(kGemmaKeys, k) != kGemmaKeys.end() && k != "attn_logit_softcapping";
    case Variant::kPhi3: return std::ranges::find(kPhi3Keys, k) != kPhi3Keys.end();
  }
  return false;
}

const Family& family_of(const GgufFile& f, const std::string& arch) {
  for (const Family& fam : kFamilies)
    if (fam.arch == arch) return fam;
  throw Error(f.source() + ": unsupported architecture '" + arch +
              "' (kvgate runs llama, qwen2, qwen3, gemma2, gemma3 and phi3)");
}

void read_family_config(const GgufFile& f, const Family& fam, const std::string& p, ModelConfig& c) {
  c.rope_style = fam.rope;
  c.qk_norm = fam.qk_norm;
  read_rope_freqs(f, fam, c);
  if (fam.variant == Variant::kGemma2 || fam.variant == Variant::kGemma3) read_gemma(f, fam, p, c);
  if (fam.variant == Variant::kPhi3) read_phi3(f, p, c);
}

}  // namespace kvgate
