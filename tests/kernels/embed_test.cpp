// Embedding rows on the device against the CPU's dequantize_row: bit-exact
// in every stored type (the conversions are exact, and the block types'
// arithmetic is the host's: kernels/block_values.h). A Q4_K_M file's
// token_embd is Q4_K, a Q6_K file's Q6_K.
#include <random>

#include "engine/model/float_convert.h"
#include "kernels/embed.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

class CudaEmbed : public CudaTest, public ::testing::WithParamInterface<TensorType> {};

// A vocab x dim embedding table of normal values in `type`'s storage.
struct Table {
  size_t row_bytes;
  std::vector<unsigned char> bytes;
};
Table random_table(TensorType type, int32_t vocab, int32_t dim, uint32_t seed) {
  Table t;
  t.row_bytes = dense_row_bytes(static_cast<WeightType>(type), dim);
  t.bytes.resize(vocab * t.row_bytes);
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> row(dim);
  for (int32_t r = 0; r < vocab; ++r) {
    for (auto& x : row) x = nd(rng);
    quantize_row(type, row.data(), t.bytes.data() + r * t.row_bytes, dim);
  }
  return t;
}

TEST_P(CudaEmbed, RowsAreTheCpusDequantizedRowsBitForBit) {
  const TensorType type = GetParam();
  // dim whole blocks: 3 of the 32-value types', 1 k-quant block
  const int32_t vocab = 300, dim = weight_block(static_cast<WeightType>(type)).values == 256 ? 256 : 96;
  const auto [row_bytes, table] = random_table(type, vocab, dim, 5);
  std::vector<float> row(dim);
  const std::vector<int32_t> tokens{0, 299, 7, 7, 150, 42, 1};
  auto d_table = to_device(table);
  auto d_tokens = to_device(tokens);
  cuda::DeviceBuffer d_out(tokens.size() * dim * sizeof(float), "out");
  cuda::embed_rows(static_cast<WeightType>(type), d_table.as(), row_bytes, d_tokens.as<int32_t>(),
                   static_cast<int64_t>(tokens.size()), dim, d_out.as<float>(), nullptr);
  const auto got = to_host<float>(d_out, tokens.size() * dim);
  for (size_t t = 0; t < tokens.size(); ++t) {
    dequantize_row(type, table.data() + tokens[t] * row_bytes, row.data(), dim);
    for (int32_t i = 0; i < dim; ++i) ASSERT_EQ(got[t * dim + i], row[i]) << "token " << tokens[t] << " dim " << i;
  }
}

// gemma's sqrt(dim) scale: the widened row times the scale, one f32
// multiply per value, as the CPU scales it -- bit for bit.
TEST_P(CudaEmbed, ScaledRowsAreTheCpusScaledRowsBitForBit) {
  const TensorType type = GetParam();
  const int32_t vocab = 40, dim = weight_block(static_cast<WeightType>(type)).values == 256 ? 512 : 64;
  const auto [row_bytes, table] = random_table(type, vocab, dim, 6);
  std::vector<float> row(dim);
  const float scale = std::sqrt(static_cast<float>(dim));
  const std::vector<int32_t> tokens{3, 39, 0, 3};
  auto d_table = to_device(table);
  auto d_tokens = to_device(tokens);
  cuda::DeviceBuffer d_out(tokens.size() * dim * sizeof(float), "out");
  cuda::embed_rows(static_cast<WeightType>(type), d_table.as(), row_bytes, d_tokens.as<int32_t>(),
                   static_cast<int64_t>(tokens.size()), dim, d_out.as<float>(), nullptr, scale);
  const auto got = to_host<float>(d_out, tokens.size() * dim);
  for (size_t t = 0; t < tokens.size(); ++t) {
    dequantize_row(type, table.data() + tokens[t] * row_bytes, row.data(), dim);
    for (int32_t i = 0; i < dim; ++i) ASSERT_EQ(got[t * dim + i], row[i] * scale) << "token " << tokens[t] << " dim " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaEmbed,
                         ::testing::Values(TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0,
                                           TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                                           TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K),
                         [](const auto& param_info) { return std::string(tensor_type_traits(static_cast<uint32_t>(param_info.param))->name); });

}  // namespace
}  // namespace kvgate
