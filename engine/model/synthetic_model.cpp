#include "engine/model/synthetic_model.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "engine/model/float_convert.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/quant_mix.h"

namespace kvgate {
namespace {

// splitmix64: tiny, fast, and good enough that no structure shows in weights.
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t s = a ^ (b * 0xd1342543de82ef95ull);
  return next(s);
}

// Values center ± half_width, uniform; rows of `cols` values in `type`.
struct Distribution {
  float center;
  float half_width;
};

void fill_rows(std::span<std::byte> out, TensorType type, int64_t cols, uint64_t tensor_seed, Distribution d) {
  const auto traits = *tensor_type_traits(static_cast<uint32_t>(type));
  const int64_t row_bytes = cols / traits.block_elems * traits.block_bytes;
  const int64_t rows = static_cast<int64_t>(out.size()) / row_bytes;
  // Threads only pay off for big tensors; on a busy machine a parallel region
  // costs milliseconds of barrier waiting, more than a norm takes to fill.
  const bool big = rows * cols >= (int64_t{1} << 20);
#pragma omp parallel if (big)
  {
    std::vector<float> row(static_cast<size_t>(cols));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      uint64_t state = mix(tensor_seed, static_cast<uint64_t>(r));
      for (float& x : row) {
        // Top 24 bits -> [0, 1) exactly in a float, then to [-1, 1).
        float u = static_cast<float>(next(state) >> 40) * 0x1.0p-24f;
        x = d.center + d.half_width * (2 * u - 1);
      }
      quantize_row(type, row.data(), out.data() + r * row_bytes, cols);
    }
  }
}

class ModelWriter {
 public:
  ModelWriter(GgufWriter& w, uint64_t seed, FileType file_type, int32_t layers, bool tied_output)
      : w_(w), seed_(seed), file_type_(file_type), layers_(layers), tied_output_(tied_output) {}

  // An [in, out] matrix (ne0 = in): uniform with variance 1/in keeps
  // |W x| ~ |x| for an x with unit RMS (uniform on ±a has variance a²/3).
  // Its type is the file type's choice for it (quant_mix.h).
  void matrix(const std::string& name, int64_t in, int64_t out) {
    add(name, {in, out}, matrix_type(file_type_, name, in, layers_, tied_output_),
        {0.0f, std::sqrt(3.0f / static_cast<float>(in))});
  }
  // RMSNorm gains: near 1, with noise so that a bug that skips them shows.
  void norm(const std::string& name, int64_t n) { add(name, {n}, TensorType::F32, {1.0f, 0.02f}); }
  // Biases: as large as the projection's outputs, so that a bug that drops
  // one changes every token.
  void bias(const std::string& name, int64_t n) { add(name, {n}, TensorType::F32, {0.0f, 0.5f}); }

 private:
  void add(const std::string& name, std::vector<int64_t> dims, TensorType type, Distribution d) {
    const uint64_t tensor_seed = mix(seed_, ++count_);
    const int64_t cols = dims[0];
    w_.add_generated_tensor(name, std::move(dims), type, [=](std::span<std::byte> out) {
      fill_rows(out, type, cols, tensor_seed, d);
    });
  }

  GgufWriter& w_;
  uint64_t seed_;
  FileType file_type_;
  int32_t layers_;
  bool tied_output_;
  uint64_t count_ = 0;
};

void require(bool ok, const std::string& message) {
  if (!ok) throw Error("synthetic model: " + message);
}

int32_t head_dim_of(const SyntheticModelSpec& s) { return s.head_dim > 0 ? s.head_dim : s.dim / s.heads; }

// Llama 3.1's RoPE factors, from its rope_scaling (factor 8, low_freq_factor
// 1, high_freq_factor 4, original_max_position_embeddings 8192): pairs whose
// wavelength is short keep their frequency, long ones turn 8 times slower,
// and those between are blended.
std::vector<float> llama3_rope_factors(float base, int32_t rope_dim) {
  constexpr double kFactor = 8, kLow = 1, kHigh = 4, kOriginal = 8192;
  const double low_wavelen = kOriginal / kLow, high_wavelen = kOriginal / kHigh;
  std::vector<float> out;
  for (int32_t i = 0; i < rope_dim; i += 2) {
    const double freq = 1.0 / std::pow(static_cast<double>(base), static_cast<double>(i) / rope_dim);
    const double wavelen = 2 * M_PI / freq;
    if (wavelen < high_wavelen) {
      out.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      out.push_back(static_cast<float>(kFactor));
    } else {
      const double smooth = (kOriginal / wavelen - kLow) / (kHigh - kLow);
      out.push_back(static_cast<float>(1 / ((1 - smooth) / kFactor + smooth)));
    }
  }
  return out;
}

}  // namespace

void validate(const SyntheticModelSpec& s) {
  require(s.arch == "llama" || s.arch == "qwen2" || s.arch == "qwen3" || s.arch == "gemma2" || s.arch == "gemma3" ||
              s.arch == "phi3",
          "arch must be llama, qwen2, qwen3, gemma2, gemma3 or phi3, got '" + s.arch + "'");
  require(s.sliding_window == 0 || s.arch.starts_with("gemma") || s.arch == "phi3",
          "sliding_window is for the gemma and phi3 architectures");
  require(s.longrope_original_context == 0 || s.arch == "phi3", "LongRoPE is for arch phi3");
  require(s.longrope_original_context >= 0 && s.longrope_original_context <= s.context,
          "longrope_original_context must be between 0 (none) and the context");
  require(s.sliding_window >= 0, "sliding_window must be >= 0, got " + std::to_string(s.sliding_window));
  require(!s.llama3_rope_freqs || s.arch == "llama", "Llama 3.1 RoPE factors are for arch llama");
  require(s.rope_linear_factor == 0 || (std::isfinite(s.rope_linear_factor) && s.rope_linear_factor >= 1),
          "rope_linear_factor must be 0 (none) or a finite number >= 1");
  require(s.rope_yarn_factor == 0 || (std::isfinite(s.rope_yarn_factor) && s.rope_yarn_factor >= 1 &&
                                       s.rope_linear_factor == 0 && s.rope_original_context > 0),
          "rope_yarn_factor must be 0 (none) or a finite number >= 1, with rope_original_context and without "
          "rope_linear_factor");
  require(s.head_dim >= 0, "head_dim must be >= 0 (0: dim / heads), got " + std::to_string(s.head_dim));
  require(s.layers >= 1, "layers must be >= 1, got " + std::to_string(s.layers));
  require(s.dim >= 1, "dim must be >= 1, got " + std::to_string(s.dim));
  require(s.heads >= 1, "heads must be >= 1, got " + std::to_string(s.heads));
  require(s.kv_heads >= 1, "kv_heads must be >= 1, got " + std::to_string(s.kv_heads));
  require(s.ffn >= 1, "ffn must be >= 1, got " + std::to_string(s.ffn));
  require(s.context >= 1, "context must be >= 1, got " + std::to_string(s.context));
  require(s.head_dim > 0 || s.dim % s.heads == 0,
          "dim " + std::to_string(s.dim) + " is not a multiple of heads " + std::to_string(s.heads));
  require(s.heads % s.kv_heads == 0,
          "heads " + std::to_string(s.heads) + " is not a multiple of kv_heads " + std::to_string(s.kv_heads));
  // RoPE rotates pairs of a head's dimensions.
  require(head_dim_of(s) % 2 == 0, "head_dim " + std::to_string(head_dim_of(s)) + " is odd");
  require(std::isfinite(s.rope_base) && s.rope_base > 0, "rope_base must be a finite number > 0");
  require(std::isfinite(s.rms_eps) && s.rms_eps > 0, "rms_eps must be a finite number > 0");
  auto traits = tensor_type_traits(static_cast<uint32_t>(s.type));
  require(traits.has_value(), "type " + std::string(ggml_type_name(static_cast<uint32_t>(s.type))) +
                                  " is not supported (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)");
  require(!s.k_quant_medium || s.type == TensorType::Q4_K || s.type == TensorType::Q5_K,
          "the _M mixture is of Q4_K or Q5_K, not " + std::string(traits->name));
  // Every matrix's ne0 is dim, ffn or heads x head_dim; quantized rows need
  // whole blocks, of 32 values (a k-quant's rows that are not whole 256s
  // fall back to a 32-value type, quant_mix.h).
  const int64_t block = std::min<int64_t>(traits->block_elems, kQBlock), q_dim = int64_t{s.heads} * head_dim_of(s);
  require(s.dim % block == 0 && s.ffn % block == 0 && q_dim % block == 0,
          "type " + std::string(traits->name) + " needs dim, ffn and heads x head_dim to be multiples of " +
              std::to_string(block) + ", got dim " + std::to_string(s.dim) + ", ffn " + std::to_string(s.ffn) +
              ", heads x head_dim " + std::to_string(q_dim));
  require(!s.vocab_from.empty(), "vocab_from (a GGUF with tokenizer.ggml.* metadata) is required");
}

namespace {

// A scalar array as items, which a writer may extend (a read file's are packed).
GgufArray unpacked(const GgufArray& a) {
  GgufArray out{a.elem_type, {}, {}};
  out.items.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out.items.push_back(a.at(i));
  return out;
}

// The tokenizer: every tokenizer.* key (tokenizer.ggml.* and, where the
// file has one, tokenizer.chat_template), copied as they are, then the
// spec's additions. Returns the vocabulary's size.
int64_t write_vocabulary(const SyntheticModelSpec& s, GgufWriter& w) {
  auto vf = GgufFile::open(s.vocab_from);
  const GgufValue* tokens_value = vf->find("tokenizer.ggml.tokens");
  if (!tokens_value || tokens_value->type != GgufType::ARRAY || std::get<GgufArray>(tokens_value->v).empty())
    throw Error("synthetic model: vocab_from " + s.vocab_from + " has no tokenizer.ggml.tokens");
  for (const auto& [key, value] : vf->metadata())
    if (key.starts_with("tokenizer.")) w.set(key, value);

  GgufArray tokens = std::get<GgufArray>(tokens_value->v);
  auto id_of = [&](std::string_view text) -> std::optional<int64_t> {
    for (std::size_t i = 0; i < tokens.items.size(); ++i)
      if (std::get<std::string>(tokens.items[i].v) == text) return static_cast<int64_t>(i);
    return std::nullopt;
  };
  if (!s.control_tokens.empty() || !s.user_tokens.empty()) {
    const GgufValue* types_value = vf->find("tokenizer.ggml.token_type");
    if (!types_value || types_value->type != GgufType::ARRAY)
      throw Error("synthetic model: vocab_from " + s.vocab_from + " has no tokenizer.ggml.token_type to add to");
    GgufArray types = unpacked(std::get<GgufArray>(types_value->v));
    const GgufValue* scores_value = vf->find("tokenizer.ggml.scores");
    std::optional<GgufArray> scores;
    if (scores_value && scores_value->type == GgufType::ARRAY) scores = unpacked(std::get<GgufArray>(scores_value->v));
    auto add = [&](const std::string& text, int64_t type) {
      if (text.empty()) throw Error("synthetic model: an added token's text is empty");
      if (id_of(text)) return;
      tokens.items.push_back(GgufValue{GgufType::STRING, text});
      types.items.push_back(GgufValue{types.elem_type, type});
      if (scores) scores->items.push_back(GgufValue{scores->elem_type, 0.0});
    };
    // llama.cpp's LLAMA_TOKEN_TYPE_CONTROL and _USER_DEFINED
    for (const std::string& text : s.control_tokens) add(text, 3);
    for (const std::string& text : s.user_tokens) add(text, 4);
    w.set("tokenizer.ggml.tokens", GgufValue{GgufType::ARRAY, tokens});
    w.set("tokenizer.ggml.token_type", GgufValue{GgufType::ARRAY, std::move(types)});
    if (scores) w.set("tokenizer.ggml.scores", GgufValue{GgufType::ARRAY, std::move(*scores)});
  }
  auto set_special = [&](const std::string& text, const char* key) {
    if (text.empty()) return;
    const std::optional<int64_t> id = id_of(text);
    if (!id) throw Error("synthetic model: " + std::string(key) + ": no token \"" + text + "\" in the vocabulary");
    w.set_u32(key, static_cast<uint32_t>(*id));
  };
  set_special(s.bos_token, "tokenizer.ggml.bos_token_id");
  set_special(s.eos_token, "tokenizer.ggml.eos_token_id");
  if (!s.chat_template.empty()) w.set_string("tokenizer.chat_template", s.chat_template);
  return static_cast<int64_t>(tokens.size());
}

}  // namespace

void write_synthetic_model(const SyntheticModelSpec& s, const std::string& path) {
  validate(s);
  GgufWriter w;
  const int64_t head_dim = head_dim_of(s);
  const int64_t q_dim = head_dim * s.heads, kv_dim = head_dim * s.kv_heads;
  const FileType file_type{s.type, s.k_quant_medium};
  const std::string type_name = file_type.name();
  const std::string a = s.arch + ".";

  w.set_string("general.architecture", s.arch);
  // llama.cpp sets Phi-3's token attributes by the model's name, which
  // needs Phi-3's own vocabulary; these models borrow another's, so the
  // name must not say "phi3".
  const std::string family = s.arch == "phi3" ? "phi-three" : s.arch;
  w.set_string("general.name", "synthetic-" + family + "-" + std::to_string(s.layers) + "L-" + std::to_string(s.dim) +
                                   "d-" + type_name + "-seed" + std::to_string(s.seed));
  w.set_u32("general.alignment", 32);
  w.set_u32("general.file_type", file_type.llama_ftype());
  w.set_u32(a + "context_length", static_cast<uint32_t>(s.context));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(s.dim));
  w.set_u32(a + "block_count", static_cast<uint32_t>(s.layers));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(s.ffn));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(s.heads));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.kv_heads));
  if (s.head_dim > 0) {
    w.set_u32(a + "attention.key_length", static_cast<uint32_t>(head_dim));
    w.set_u32(a + "attention.value_length", static_cast<uint32_t>(head_dim));
  }
  w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(head_dim));
  w.set_f32(a + "rope.freq_base", s.rope_base);
  w.set_f32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
  if (s.sliding_window > 0) w.set_u32(a + "attention.sliding_window", static_cast<uint32_t>(s.sliding_window));
  if (s.arch == "gemma2") {  // written out, as Gemma 2's converter does
    w.set_f32(a + "attn_logit_softcapping", 50.0f);
    w.set_f32(a + "final_logit_softcapping", 30.0f);
  }
  if (s.rope_yarn_factor > 0) {
    w.set_string(a + "rope.scaling.type", "yarn");
    w.set_f32(a + "rope.scaling.factor", s.rope_yarn_factor);
    w.set_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(s.rope_original_context));
  }
  if (s.rope_linear_factor > 0) {
    w.set_string(a + "rope.scaling.type", "linear");
    w.set_f32(a + "rope.scaling.factor", s.rope_linear_factor);
  }

  const int64_t vocab = write_vocabulary(s, w);
  w.set_u32(a + "vocab_size", static_cast<uint32_t>(vocab));

  if (s.longrope_original_context > 0) {  // phi3's LongRoPE: two factor sets and the magnitude scale
    const auto half = static_cast<int64_t>(head_dim / 2);
    std::vector<float> long_factors, short_factors;
    for (int64_t i = 0; i < half; ++i) {
      const double t = half > 1 ? static_cast<double>(i) / static_cast<double>(half - 1) : 0.0;
      short_factors.push_back(static_cast<float>(1.0 + 0.5 * t));
      long_factors.push_back(static_cast<float>(std::pow(32.0, t)));
    }
    auto add_factors = [&](const char* name, std::vector<float> factors) {
      w.add_generated_tensor(name, {half}, TensorType::F32, [factors](std::span<std::byte> out) {
        std::memcpy(out.data(), factors.data(), out.size());
      });
    };
    add_factors("rope_factors_long.weight", std::move(long_factors));
    add_factors("rope_factors_short.weight", std::move(short_factors));
    const double scale = static_cast<double>(s.context) / s.longrope_original_context;
    w.set_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(s.longrope_original_context));
    w.set_f32(a + "rope.scaling.attn_factor",
              static_cast<float>(std::sqrt(1 + std::log(scale) / std::log(s.longrope_original_context))));
  }
  if (s.llama3_rope_freqs) {
    std::vector<float> factors = llama3_rope_factors(s.rope_base, static_cast<int32_t>(head_dim));
    w.add_generated_tensor("rope_freqs.weight", {static_cast<int64_t>(factors.size())}, TensorType::F32,
                           [factors](std::span<std::byte> out) { std::memcpy(out.data(), factors.data(), out.size()); });
  }
  const bool gemma = s.arch.starts_with("gemma"), phi3 = s.arch == "phi3";
  ModelWriter m(w, s.seed, file_type, s.layers, /*tied_output=*/gemma);
  m.matrix("token_embd.weight", s.dim, vocab);
  m.norm("output_norm.weight", s.dim);
  if (!gemma) m.matrix("output.weight", s.dim, vocab);  // gemma ties the output to the embedding
  for (int32_t i = 0; i < s.layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    m.norm(p + "attn_norm.weight", s.dim);
    if (phi3) {  // Q, K and V fused, as Phi-3 ships them
      m.matrix(p + "attn_qkv.weight", s.dim, q_dim + 2 * kv_dim);
    } else {
      m.matrix(p + "attn_q.weight", s.dim, q_dim);
      m.matrix(p + "attn_k.weight", s.dim, kv_dim);
      m.matrix(p + "attn_v.weight", s.dim, kv_dim);
    }
    if (s.arch == "qwen2") {
      m.bias(p + "attn_q.bias", q_dim);
      m.bias(p + "attn_k.bias", kv_dim);
      m.bias(p + "attn_v.bias", kv_dim);
    }
    if (s.arch == "qwen3" || s.arch == "gemma3") {
      m.norm(p + "attn_q_norm.weight", head_dim);
      m.norm(p + "attn_k_norm.weight", head_dim);
    }
    m.matrix(p + "attn_output.weight", q_dim, s.dim);
    if (gemma) m.norm(p + "post_attention_norm.weight", s.dim);
    m.norm(p + "ffn_norm.weight", s.dim);
    if (phi3) {  // the gate's rows, then up's, in one tensor
      m.matrix(p + "ffn_up.weight", s.dim, 2 * int64_t{s.ffn});
    } else {
      m.matrix(p + "ffn_gate.weight", s.dim, s.ffn);
      m.matrix(p + "ffn_up.weight", s.dim, s.ffn);
    }
    m.matrix(p + "ffn_down.weight", s.ffn, s.dim);
    if (gemma) m.norm(p + "post_ffw_norm.weight", s.dim);
  }
  w.write(path);
}

}  // namespace kvgate
