// The device's block decoding (kernels/block_values.h), compiled for the
// host, against the CPU's dequantize_row: bit for bit for every value of
// every block type, whole blocks at a time and in the mat-vec's pieces of
// 8. The kernels run the same functions with __fmul_rn / __fmaf_rn where
// this runs a * b / std::fma, the same IEEE roundings, so this is how a
// machine without a GPU checks what the device widens every weight to.
// Also the seam's block sizes against engine/model's. No device needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/model/float_convert.h"
#include "engine/model/tensor_type.h"
#include "engine/weights_view.h"
#include "kernels/block_values.h"
#include "tests/kernels/block_type_dispatch.h"

namespace kvgate {
namespace {

constexpr TensorType kBlockTypes[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                      TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};

std::string name_of(TensorType t) { return std::string(ggml_type_name(static_cast<uint32_t>(t))); }

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

TEST(BlockValues, TheSeamsBlockSizesAreEngineModels) {
  for (const TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
                             TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K,
                             TensorType::Q6_K}) {
    const auto traits = tensor_type_traits(static_cast<uint32_t>(t));
    ASSERT_TRUE(traits) << name_of(t);
    const auto w = static_cast<WeightType>(t);
    EXPECT_EQ(weight_block(w).values, traits->block_elems) << name_of(t);
    EXPECT_EQ(weight_block(w).bytes, traits->block_bytes) << name_of(t);
    EXPECT_EQ(is_block_type(w), is_block_quantized(t)) << name_of(t);
    const int64_t cols = 4 * 256;
    EXPECT_EQ(dense_row_bytes(w, cols), static_cast<size_t>(cols / traits->block_elems * traits->block_bytes))
        << name_of(t);
  }
}

TEST(BlockValues, F16IsTheHostsConversionForEveryBitPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const unsigned char b[2] = {static_cast<unsigned char>(h & 0xFF), static_cast<unsigned char>(h >> 8)};
    const float got = block_values::f16(b), want = f16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    else
      EXPECT_EQ(bits(got), bits(want)) << std::hex << h;
  }
}

// Byte offsets of a block's f16 fields (its scales), which random bytes
// must not make infinite or NaN: those have no value to compare.
std::vector<int> f16_fields(TensorType t) {
  switch (t) {
    case TensorType::Q4_1:
    case TensorType::Q5_1:
    case TensorType::Q4_K:
    case TensorType::Q5_K: return {0, 2};
    case TensorType::Q6_K: return {208};
    default: return {0};
  }
}

// Rows of `blocks` blocks each: some quantized from normal values at scales
// from f16's subnormals to the thousands, some random bytes (every bit
// pattern of the quants, the packed scales and the high bits) with finite
// random f16 scales.
std::vector<unsigned char> test_rows(TensorType t, int64_t cols, int n_rows, std::mt19937& rng) {
  const size_t row_bytes = dense_row_bytes(static_cast<WeightType>(t), cols);
  std::vector<unsigned char> rows(row_bytes * n_rows);
  std::normal_distribution<float> nd;
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<float> v(static_cast<size_t>(cols));
  const float scales[] = {1.0f, 1e-4f, 3e-6f, 1e3f};
  for (int r = 0; r < n_rows; ++r) {
    unsigned char* row = rows.data() + r * row_bytes;
    if (r % 2 == 0) {
      const float s = scales[(r / 2) % 4];
      for (auto& x : v) x = nd(rng) * s + (r % 4 == 2 ? s : 0.0f);  // some rows off-centre, for the _1 and K mins
      quantize_row(t, v.data(), row, cols);
    } else {
      for (size_t i = 0; i < row_bytes; ++i) row[i] = static_cast<unsigned char>(byte(rng));
      const int64_t block_bytes = weight_block(static_cast<WeightType>(t)).bytes;
      for (size_t b = 0; b < row_bytes; b += block_bytes)
        for (const int at : f16_fields(t)) {
          const uint16_t h = f32_to_f16(nd(rng) * scales[byte(rng) % 4]);
          row[b + at] = static_cast<unsigned char>(h & 0xFF), row[b + at + 1] = static_cast<unsigned char>(h >> 8);
        }
    }
  }
  return rows;
}

class BlockValuesOf : public ::testing::TestWithParam<TensorType> {};

TEST_P(BlockValuesOf, EveryValueIsDequantizeRowsBitForBit) {
  const TensorType t = GetParam();
  const auto w = static_cast<WeightType>(t);
  const int64_t cols = 4 * weight_block(w).values * (weight_block(w).values == 32 ? 8 : 1);
  const int n_rows = 16;
  std::mt19937 rng(static_cast<uint32_t>(t) + 100);
  const auto rows = test_rows(t, cols, n_rows, rng);
  const size_t row_bytes = dense_row_bytes(w, cols);
  std::vector<float> want(static_cast<size_t>(cols));
  cuda_testing::with_block_type(t, [&](auto tc) {
    constexpr WeightType T = decltype(tc)::value;
    using C = block_values::Codec<T>;
    for (int r = 0; r < n_rows; ++r) {
      const unsigned char* row = rows.data() + r * row_bytes;
      dequantize_row(t, row, want.data(), cols);
      for (int64_t c = 0; c < cols; ++c) {
        const unsigned char* block = row + (c / C::kValues) * C::kBytes;
        const int j = static_cast<int>(c % C::kValues);
        // As weight_decode.cuh reads one value (widen_rows, embed_rows) ...
        const float one = block_values::value_at<T>(block, j);
        // ... and as quant_matvec reads it, in a piece of 8 sharing a scale.
        const float piece = C::value(block, C::scale(block, j - j % 8), j);
        ASSERT_EQ(bits(one), bits(want[c])) << "row " << r << ", column " << c << ": " << one << ", the CPU's "
                                            << want[c];
        ASSERT_EQ(bits(piece), bits(want[c])) << "row " << r << ", column " << c << " (piece)";
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Types, BlockValuesOf, ::testing::ValuesIn(kBlockTypes),
                         [](const auto& param_info) { return name_of(param_info.param); });

}  // namespace
}  // namespace kvgate
