// The rule before any family: a model kvgate cannot compute exactly is
// refused, naming the tensor or key it does not compute; it never loads to
// be served approximately.
#include <gtest/gtest.h>

#include <functional>

#include "base/error.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/model/model.h"
#include "engine/model/synthetic_model.h"
#include "tests/shared_data.h"
#include "tests/temp_dir.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

class ModelRefusal : public ::testing::Test {
 protected:
  // A small synthetic model of `arch`, copied without the tensor named
  // `drop` and with `edit` applied to the copy.
  std::string variant(const std::string& arch, const std::function<void(GgufWriter&)>& edit, int32_t layers = 1,
                      const std::string& drop = "") {
    SyntheticModelSpec s;
    s.arch = arch;
    s.layers = layers, s.dim = 32, s.heads = 2, s.kv_heads = 1, s.ffn = 64, s.context = 64;
    s.vocab_from = shared_path("models/stories260K.gguf");
    const std::string base = (dir_.path() / "base.gguf").string();
    write_synthetic_model(s, base);
    auto src = GgufFile::open(base);
    GgufWriter w;
    for (const auto& [k, v] : src->metadata()) w.set(k, v);
    for (const GgufTensor& t : src->tensors())
      if (t.name != drop) w.add_tensor(t.name, t.dims, t.type, std::vector<std::byte>(t.data, t.data + t.nbytes));
    edit(w);
    const std::string path = (dir_.path() / (arch + "-variant.gguf")).string();
    w.write(path);
    return path;
  }

  static std::string load_error(const std::string& path) {
    try {
      Model::load(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "(loaded)";
  }

  static std::vector<std::byte> floats(size_t n, float v) {
    std::vector<float> f(n, v);
    const auto* b = reinterpret_cast<const std::byte*>(f.data());
    return {b, b + n * sizeof(float)};
  }

  kvgate::testing::TempDir dir_;
};

#define EXPECT_REFUSED(path, ...)                                   \
  do {                                                              \
    const std::string err = load_error(path);                       \
    for (const char* want : {__VA_ARGS__})                          \
      EXPECT_NE(err.find(want), std::string::npos) << "error: " << err; \
  } while (0)

TEST_F(ModelRefusal, AnUnknownTensorIsRefusedByName) {
  const std::string path = variant("llama", [](GgufWriter& w) {
    w.add_tensor("blk.0.attn_output.bias", {32}, TensorType::F32, floats(32, 0.5f));
  });
  EXPECT_REFUSED(path, "tensor 'blk.0.attn_output.bias'", "refuses the model");
}

TEST_F(ModelRefusal, AnUnsupportedRopeScalingTypeIsRefusedByName) {
  const std::string path = variant("llama", [](GgufWriter& w) {
    w.set_string("llama.rope.scaling.type", "longrope");
    w.set_f32("llama.rope.scaling.factor", 4);
  });
  EXPECT_REFUSED(path, "llama.rope.scaling.type 'longrope' is not supported");
}

TEST_F(ModelRefusal, YarnOnAFamilyWithoutItIsRefused) {
  const std::string path = variant("gemma2", [](GgufWriter& w) {
    w.set_string("gemma2.rope.scaling.type", "yarn");
    w.set_f32("gemma2.rope.scaling.factor", 4);
  });
  EXPECT_REFUSED(path, "rope.scaling.type 'yarn' is not supported for gemma2");
}

TEST_F(ModelRefusal, AnUnknownArchitectureKeyIsRefusedByName) {
  // Gemma's sliding window on a llama file: nothing here computes it.
  const std::string path = variant("llama", [](GgufWriter& w) { w.set_u32("llama.attention.sliding_window", 16); });
  EXPECT_REFUSED(path, "metadata key 'llama.attention.sliding_window' is not supported");
}

TEST_F(ModelRefusal, ExpertCountsLoadAtZeroAndAreRefusedOtherwise) {
  EXPECT_EQ(load_error(variant("llama", [](GgufWriter& w) { w.set_u32("llama.expert_count", 0); })), "(loaded)");
  EXPECT_REFUSED(variant("llama", [](GgufWriter& w) { w.set_u32("llama.expert_count", 8); }),
                 "metadata key 'llama.expert_count'");
}

TEST_F(ModelRefusal, RopeFactorsOnAFamilyWithoutThemAreRefused) {
  const std::string path = variant("qwen2", [](GgufWriter& w) {
    w.add_tensor("rope_freqs.weight", {8}, TensorType::F32, floats(8, 2.0f));
  });
  EXPECT_REFUSED(path, "'rope_freqs.weight' is not part of the qwen2 architecture");
}

TEST_F(ModelRefusal, HalfOfLongRopeIsRefused) {
  const std::string path = variant("phi3", [](GgufWriter& w) {
    w.add_tensor("rope_factors_long.weight", {8}, TensorType::F32, floats(8, 4.0f));
  });
  EXPECT_REFUSED(path, "LongRoPE needs both rope_factors_long.weight and rope_factors_short.weight");
}

TEST_F(ModelRefusal, GemmaKeysOnAnotherFamilyAreRefused) {
  const std::string path = variant("qwen3", [](GgufWriter& w) { w.set_f32("qwen3.final_logit_softcapping", 30); });
  EXPECT_REFUSED(path, "metadata key 'qwen3.final_logit_softcapping' is not supported");
}

TEST_F(ModelRefusal, EveryFamilysOwnTensorsLoad) {
  for (const char* arch : {"llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3"}) {
    const std::string path = variant(arch, [](GgufWriter&) {});
    EXPECT_EQ(load_error(path), "(loaded)") << arch;
    const auto m = Model::load(path);
    EXPECT_EQ(m->config().arch, arch);
    EXPECT_EQ(m->config().qkv_bias, std::string(arch) == "qwen2");
    EXPECT_EQ(m->config().qk_norm, std::string(arch) == "qwen3" || std::string(arch) == "gemma3");
    EXPECT_EQ(m->config().post_norms, std::string(arch).starts_with("gemma"));
    EXPECT_EQ(m->config().fused_gate_up, std::string(arch) == "phi3");
    EXPECT_EQ(m->config().rope_style, std::string(arch) == "llama" ? RopeStyle::kAdjacent : RopeStyle::kHalves);
  }
}

TEST_F(ModelRefusal, AMissingBiasOfAModelWithBiasesIsNamed) {
  // qwen2's biases come as a set: layer 0 has them, so every layer must.
  const std::string path = variant("qwen2", [](GgufWriter&) {}, 2, "blk.1.attn_k.bias");
  EXPECT_REFUSED(path, "blk.1.attn_k.bias");
}

}  // namespace
}  // namespace kvgate
