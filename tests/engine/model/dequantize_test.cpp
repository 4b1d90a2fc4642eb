// kvgate reads every quantized type as llama.cpp does, bit for bit:
// blocks that llama-quantize wrote and ggml's to_float widened
// (tests/models/quant/blocks.txt), and whole files llama-quantize wrote
// (q4_k_m.gguf, q6_k.gguf), every tensor's values against digests of
// llama.cpp's. Then kvgate's own quantizer: its blocks decode to within a
// step of what went in, and its Q4_K_M mixture is llama-quantize's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "engine/model/dequantize.h"
#include "engine/model/float_convert.h"
#include "engine/model/gguf.h"
#include "engine/model/quant_mix.h"
#include "engine/model/quantize.h"

namespace kvgate {
namespace {

std::string quant_dir() { return std::string(KVGATE_SOURCE_DIR) + "/tests/models/quant/"; }

// ggml's lower-case names of the k-quants ("q4_K") as kvgate's ("Q4_K").
TensorType type_named(std::string name) {
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (uint32_t id = 0; id < 40; ++id)
    if (tensor_type_traits(id) && tensor_type_traits(id)->name == name) return static_cast<TensorType>(id);
  throw std::runtime_error("no type " + name);
}

std::vector<uint8_t> hex_bytes(const std::string& hex) {
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

uint64_t fnv1a(const void* data, size_t n) {  // as quant_reference.cpp computes it
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const uint8_t*>(data)[i]) * 0x100000001b3ull;
  return h;
}

TEST(Dequantize, EveryTypeEqualsLlamaCppOnItsBlocksBitForBit) {
  std::ifstream in(quant_dir() + "blocks.txt");
  ASSERT_TRUE(in) << "run tests/models/make_quant_vectors.sh";
  std::map<std::string, int> checked;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string tensor, type_name, raw, values;
    int64_t block = 0;
    words >> tensor >> type_name >> block >> raw >> values;
    const TensorType type = type_named(type_name);
    const auto traits = *tensor_type_traits(static_cast<uint32_t>(type));
    const std::vector<uint8_t> bytes = hex_bytes(raw);
    ASSERT_EQ(static_cast<int64_t>(bytes.size()), traits.block_bytes) << line.substr(0, 60);
    std::vector<float> got(static_cast<size_t>(traits.block_elems));
    dequantize_blocks(type, bytes.data(), got.data(), traits.block_elems);
    int bad = 0;
    for (size_t j = 0; j < got.size(); ++j) {
      const auto want = static_cast<uint32_t>(std::stoul(values.substr(8 * j, 8), nullptr, 16));
      uint32_t bits;
      std::memcpy(&bits, &got[j], 4);
      if (bits != want && ++bad <= 3)
        ADD_FAILURE() << tensor << " " << type_name << " block " << block << " value " << j << ": " << got[j]
                      << " (0x" << std::hex << bits << "), llama.cpp 0x" << want;
    }
    ++checked[std::string(traits.name)];
  }
  for (const char* t : {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"})
    EXPECT_GE(checked[t], 6) << t << " blocks checked";
}

class WholeFile : public ::testing::TestWithParam<std::string> {};

// Every tensor of the file: its type, its bytes as llama.cpp read them and
// its values as llama.cpp widened them.
TEST_P(WholeFile, EveryTensorDequantizesAsLlamaCppDoes) {
  auto file = GgufFile::open(quant_dir() + GetParam() + ".gguf");
  std::ifstream in(quant_dir() + GetParam() + ".digest");
  ASSERT_TRUE(in);
  size_t tensors = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name, type_name, raw_digest, values_digest;
    words >> name >> type_name >> raw_digest >> values_digest;
    const GgufTensor* t = file->find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->type, type_named(type_name)) << name;
    EXPECT_EQ(fnv1a(t->data, t->nbytes), std::stoull(raw_digest, nullptr, 16)) << name;
    std::vector<float> values(static_cast<size_t>(t->elements()));
    for (int64_t r = 0; r < t->rows(); ++r)
      dequantize_row(t->type, t->data + r * (t->nbytes / static_cast<uint64_t>(t->rows())),
                     values.data() + r * t->dims[0], t->dims[0]);
    EXPECT_EQ(fnv1a(values.data(), values.size() * 4), std::stoull(values_digest, nullptr, 16)) << name;
    ++tensors;
  }
  EXPECT_EQ(tensors, file->tensors().size());
}

INSTANTIATE_TEST_SUITE_P(LlamaQuantized, WholeFile, ::testing::Values("q4_k_m", "q6_k"));

// `kvgate mkmodel --type q4_k_m` gives each tensor the type llama-quantize
// gave it in the same model.
TEST(QuantMix, Q4_K_MIsLlamaQuantizesMixture) {
  auto file = GgufFile::open(quant_dir() + "q4_k_m.gguf");
  const FileType ft = *parse_file_type("q4_k_m");
  int matrices = 0, six = 0;
  for (const GgufTensor& t : file->tensors()) {
    if (t.dims.size() != 2) continue;
    const TensorType want = t.type;
    EXPECT_EQ(matrix_type(ft, t.name, t.dims[0], 2, /*tied_output=*/false), want) << t.name;
    ++matrices;
    six += want == TensorType::Q6_K;
  }
  EXPECT_EQ(matrices, 16);
  EXPECT_EQ(six, 3);  // output, and layer 1's attn_v and ffn_down
  EXPECT_EQ(ft.llama_ftype(), 15u);
  EXPECT_EQ(ft.name(), "Q4_K_M");
}

TEST(QuantMix, KQuantRowsThatAreNotWhole256sFallBack) {
  const FileType q4k = *parse_file_type("q4_k"), q6k = *parse_file_type("q6_k");
  EXPECT_EQ(matrix_type(q4k, "blk.0.ffn_down.weight", 96, 4, false), TensorType::Q5_0);
  EXPECT_EQ(matrix_type(q6k, "blk.0.ffn_down.weight", 96, 4, false), TensorType::Q8_0);
  EXPECT_EQ(matrix_type(q4k, "blk.0.ffn_down.weight", 512, 4, false), TensorType::Q4_K);
  EXPECT_FALSE(parse_file_type("q3_k").has_value());
}

// kvgate's quantizer: every value decodes to within one step of its block
// (or sub-block) of what went in, and all-zero blocks stay zero.
TEST(Quantize, EveryTypeRoundTripsWithinAStep) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(1024);
  for (float& v : x) v = dist(rng);
  for (TensorType type : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                          TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
    const auto traits = *tensor_type_traits(static_cast<uint32_t>(type));
    std::vector<std::byte> blocks(static_cast<size_t>(1024 / traits.block_elems * traits.block_bytes));
    quantize_blocks(type, x.data(), blocks.data(), 1024);
    std::vector<float> y(1024);
    dequantize_blocks(type, blocks.data(), y.data(), 1024);
    // The worst error against the range of values: bits of the type less
    // the scales' own rounding (6-bit sub-block scales for Q4_K and Q5_K).
    const double bits = type == TensorType::Q8_0 ? 8 : type == TensorType::Q6_K ? 6
                        : type == TensorType::Q5_0 || type == TensorType::Q5_1 || type == TensorType::Q5_K ? 5 : 4;
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(x[i] - y[i])));
    EXPECT_LT(worst, 8.0 / std::pow(2.0, bits - 1)) << traits.name;  // |x| < ~4 here: a step is range / 2^bits

    std::vector<float> zeros(256, 0.0f), back(256, 1.0f);
    quantize_blocks(type, zeros.data(), blocks.data(), 256);
    dequantize_blocks(type, blocks.data(), back.data(), 256);
    for (float v : back) ASSERT_EQ(v, 0.0f) << traits.name;
  }
}

}  // namespace
}  // namespace kvgate
