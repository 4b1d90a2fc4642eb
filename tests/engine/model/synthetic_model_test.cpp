#include "engine/model/synthetic_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/error.h"
#include "engine/model/float_convert.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

// A file under the test temp dir, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               (std::to_string(::getpid()) + "-" + name))
                  .string()) {}
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<char> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

SyntheticModelSpec tiny(TensorType type = TensorType::F32) {
  return {.layers = 2, .dim = 64, .heads = 4, .kv_heads = 2, .ffn = 96, .context = 256,
          .rope_base = 500000, .rms_eps = 1e-6f, .type = type, .seed = 7,
          .vocab_from = shared_path("models/stories260K.gguf")};
}

std::string error_of(const SyntheticModelSpec& s) {
  try {
    validate(s);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<float> values(const GgufTensor& t) {
  std::vector<float> out(static_cast<size_t>(t.elements()));
  const auto traits = *tensor_type_traits(static_cast<uint32_t>(t.type));
  const int64_t row_bytes = t.dims[0] / traits.block_elems * traits.block_bytes;
  for (int64_t r = 0; r < t.rows(); ++r)
    dequantize_row(t.type, t.data + r * row_bytes, out.data() + r * t.dims[0], t.dims[0]);
  return out;
}

TEST(SyntheticModel, RoundTripsThroughGgufFile) {
  TempFile file("synthetic-f32.gguf");
  write_synthetic_model(tiny(), file.path());
  auto f = GgufFile::open(file.path());
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_FALSE(f->get_string("general.name").empty());
  EXPECT_EQ(f->get_uint("general.alignment"), 32u);
  EXPECT_EQ(f->get_uint("llama.context_length"), 256u);
  EXPECT_EQ(f->get_uint("llama.embedding_length"), 64u);
  EXPECT_EQ(f->get_uint("llama.block_count"), 2u);
  EXPECT_EQ(f->get_uint("llama.feed_forward_length"), 96u);
  EXPECT_EQ(f->get_uint("llama.attention.head_count"), 4u);
  EXPECT_EQ(f->get_uint("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(f->get_uint("llama.rope.dimension_count"), 16u);
  EXPECT_FLOAT_EQ(static_cast<float>(f->get_float("llama.rope.freq_base")), 500000.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(f->get_float("llama.attention.layer_norm_rms_epsilon")), 1e-6f);

  // Every tokenizer key of the source, with the same value.
  auto vocab = GgufFile::open(shared_path("models/stories260K.gguf"));
  int copied = 0;
  for (const auto& [key, value] : vocab->metadata()) {
    if (!key.starts_with("tokenizer.")) continue;
    ++copied;
    const GgufValue* got = f->find(key);
    ASSERT_NE(got, nullptr) << key;
    EXPECT_EQ(got->type, value.type) << key;
  }
  EXPECT_GE(copied, 8);
  const auto& tokens = f->get_array("tokenizer.ggml.tokens").items;
  ASSERT_EQ(tokens.size(), 512u);
  EXPECT_EQ(std::get<std::string>(tokens[1].v), "<s>");
  EXPECT_EQ(f->get_uint("tokenizer.ggml.eos_token_id"), 2u);

  // 3 + 9 per layer, in ggml dims order (ne0 = input width).
  EXPECT_EQ(f->tensors().size(), 3u + 9u * 2u);
  auto shape = [&](const std::string& name, std::vector<int64_t> dims, TensorType type) {
    const GgufTensor& t = f->tensor(name, dims);
    EXPECT_EQ(t.type, type) << name;
  };
  shape("token_embd.weight", {64, 512}, TensorType::F32);
  shape("output_norm.weight", {64}, TensorType::F32);
  shape("output.weight", {64, 512}, TensorType::F32);
  for (int i = 0; i < 2; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    shape(p + "attn_norm.weight", {64}, TensorType::F32);
    shape(p + "attn_q.weight", {64, 64}, TensorType::F32);
    shape(p + "attn_k.weight", {64, 32}, TensorType::F32);
    shape(p + "attn_v.weight", {64, 32}, TensorType::F32);
    shape(p + "attn_output.weight", {64, 64}, TensorType::F32);
    shape(p + "ffn_norm.weight", {64}, TensorType::F32);
    shape(p + "ffn_gate.weight", {64, 96}, TensorType::F32);
    shape(p + "ffn_up.weight", {64, 96}, TensorType::F32);
    shape(p + "ffn_down.weight", {96, 64}, TensorType::F32);
  }
}

TEST(SyntheticModel, WeightsHaveTheIntendedScale) {
  TempFile file("synthetic-scale.gguf");
  write_synthetic_model(tiny(), file.path());
  auto f = GgufFile::open(file.path());
  // Variance 1/in: ffn_down has in = 96, attn_q in = 64.
  for (auto [name, in] : {std::pair<const char*, double>{"blk.1.ffn_down.weight", 96}, {"blk.0.attn_q.weight", 64}}) {
    std::vector<float> w = values(*f->find_tensor(name));
    double sum = 0, sq = 0;
    for (float x : w) {
      sum += x;
      sq += static_cast<double>(x) * x;
    }
    const double n = static_cast<double>(w.size());
    EXPECT_NEAR(sum / n, 0.0, 0.02) << name;
    EXPECT_NEAR(sq / n * in, 1.0, 0.1) << name;
  }
  for (float g : values(*f->find_tensor("blk.0.ffn_norm.weight"))) {
    EXPECT_GT(g, 0.9f);
    EXPECT_LT(g, 1.1f);
  }
  // Rows differ from each other and from other tensors' rows.
  std::vector<float> q = values(*f->find_tensor("blk.0.attn_q.weight"));
  std::vector<float> k = values(*f->find_tensor("blk.0.attn_k.weight"));
  EXPECT_NE(q[0], q[64]);
  EXPECT_NE(q[0], k[0]);
}

TEST(SyntheticModel, QuantizedTypesRoundTrip) {
  for (TensorType type : {TensorType::F16, TensorType::BF16, TensorType::Q8_0}) {
    TempFile file("synthetic-q.gguf");
    write_synthetic_model(tiny(type), file.path());
    auto f = GgufFile::open(file.path());
    EXPECT_EQ(f->find_tensor("blk.1.ffn_down.weight")->type, type);
    EXPECT_EQ(f->find_tensor("token_embd.weight")->type, type);
    EXPECT_EQ(f->find_tensor("blk.1.ffn_norm.weight")->type, TensorType::F32);
    const int64_t dims[] = {96, 64};
    const GgufTensor& down = f->tensor("blk.1.ffn_down.weight", dims);
    const auto traits = *tensor_type_traits(static_cast<uint32_t>(type));
    EXPECT_EQ(down.nbytes, static_cast<uint64_t>(96 / traits.block_elems * traits.block_bytes * 64));
    // The same generator before rounding: close to the F32 model's values.
    TempFile f32file("synthetic-q-ref.gguf");
    write_synthetic_model(tiny(), f32file.path());
    auto ref = GgufFile::open(f32file.path());
    std::vector<float> a = values(down), b = values(*ref->find_tensor("blk.1.ffn_down.weight"));
    double max_err = 0;
    for (size_t i = 0; i < a.size(); ++i) max_err = std::max(max_err, std::fabs(static_cast<double>(a[i] - b[i])));
    EXPECT_LT(max_err, 0.01) << ggml_type_name(static_cast<uint32_t>(type));
  }
}

TEST(SyntheticModel, SameSeedSameBytesOtherSeedOtherWeights) {
  TempFile a("synthetic-a.gguf"), b("synthetic-b.gguf"), c("synthetic-c.gguf");
  write_synthetic_model(tiny(), a.path());
  write_synthetic_model(tiny(), b.path());
  SyntheticModelSpec other = tiny();
  other.seed = 8;
  write_synthetic_model(other, c.path());
  std::vector<char> ba = read_all(a.path()), bb = read_all(b.path()), bc = read_all(c.path());
  EXPECT_GT(ba.size(), 0u);
  EXPECT_EQ(ba, bb);
  EXPECT_NE(ba, bc);
}

TEST(SyntheticModel, BadSpecsAreRejectedWithTheReason) {
  auto with = [](auto change) {
    SyntheticModelSpec s = tiny();
    change(s);
    return error_of(s);
  };
  EXPECT_EQ(error_of(tiny()), "");
  EXPECT_NE(with([](auto& s) { s.heads = 5; }).find("not a multiple of heads"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.kv_heads = 3; }).find("not a multiple of kv_heads"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.dim = 36, s.heads = 4, s.kv_heads = 4; }).find("head_dim"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.layers = 0; }).find("layers"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.ffn = -1; }).find("ffn"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.rms_eps = 0; }).find("rms_eps"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.rope_base = NAN; }).find("rope_base"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.type = TensorType::Q8_0, s.ffn = 100; }).find("multiples of 32"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.type = static_cast<TensorType>(10); }).find("not supported"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.type = TensorType::Q6_K, s.k_quant_medium = true; }).find("_M mixture"), std::string::npos);
  EXPECT_NE(with([](auto& s) { s.vocab_from.clear(); }).find("vocab_from"), std::string::npos);

  // A vocabulary file without tokens, and a missing one, name the file.
  TempFile out("synthetic-bad.gguf");
  SyntheticModelSpec s = tiny();
  s.vocab_from = "/nonexistent/vocab.gguf";
  try {
    write_synthetic_model(s, out.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/vocab.gguf"), std::string::npos) << e.what();
  }
  TempFile novocab("synthetic-novocab.gguf");
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.write(novocab.path());
  s.vocab_from = novocab.path();
  try {
    write_synthetic_model(s, out.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.tokens"), std::string::npos) << e.what();
  }
}

TEST(GgufWriterStreaming, GeneratedTensorsMatchHeldOnes) {
  // The same bytes, once held and once generated, give the same file both in
  // memory and streamed to disk.
  std::vector<std::byte> data(3 * sizeof(BlockQ8_0));
  for (size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i * 7);
  GgufWriter held, generated;
  for (GgufWriter* w : {&held, &generated}) w->set_u32("n", 3);
  held.add_tensor("a", {32, 3}, TensorType::Q8_0, data);
  held.add_tensor("b", {5}, TensorType::F32, std::vector<std::byte>(20, std::byte{9}));
  generated.add_generated_tensor("a", {32, 3}, TensorType::Q8_0, [&](std::span<std::byte> out) {
    ASSERT_EQ(out.size(), data.size());
    std::copy(data.begin(), data.end(), out.begin());
  });
  generated.add_generated_tensor("b", {5}, TensorType::F32, [](std::span<std::byte> out) {
    ASSERT_EQ(out.size(), 20u);
    std::fill(out.begin(), out.end(), std::byte{9});
  });
  const std::vector<std::byte> bytes = held.serialize();
  EXPECT_EQ(generated.serialize(), bytes);
  TempFile file("streamed.gguf");
  generated.write(file.path());
  std::vector<char> on_disk = read_all(file.path());
  ASSERT_EQ(on_disk.size(), bytes.size());
  EXPECT_EQ(std::memcmp(on_disk.data(), bytes.data(), bytes.size()), 0);
  auto f = GgufFile::parse(bytes);
  EXPECT_EQ(f->find_tensor("b")->nbytes, 20u);

  GgufWriter bad;
  EXPECT_THROW(bad.add_generated_tensor("q", {33, 2}, TensorType::Q8_0, [](std::span<std::byte>) {}), Error);
  EXPECT_THROW(bad.add_generated_tensor("z", {0}, TensorType::F32, [](std::span<std::byte>) {}), Error);
}

TEST(GgufWriterStreaming, AFailedWriteLeavesNoFile) {
  TempFile file("failed.gguf");
  GgufWriter w;
  w.add_generated_tensor("t", {8}, TensorType::F32, [](std::span<std::byte>) { throw Error("generator broke"); });
  try {
    w.write(file.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("generator broke"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(file.path()));
}

}  // namespace
}  // namespace kvgate
