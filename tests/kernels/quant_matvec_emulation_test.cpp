// quant_matvec's kernel run on the host: the same piece arithmetic
// (kernels/quant_matvec_piece.h, compiled for the host) over the same walk
// (warp w takes steps w, w + 4, ...; lane l the piece at piece_column),
// lanes summed as warp_sum's butterfly does, warps in order. Without a GPU
// this is what checks the kernel's indexing: every weight of a row met
// exactly once, at its column's activation, for every block type. The
// device tests (quant_matvec_test.cpp) check the kernel itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/model/float_convert.h"
#include "engine/model/tensor_type.h"
#include "kernels/quant_matvec_piece.h"
#include "tests/kernels/block_type_dispatch.h"

namespace kvgate {
namespace {

constexpr int kWarps = 4, kLanes = cuda::kMatvecLanes;

// y[t] for one weight row, as the kernel computes it (kRows 1 here: a
// thread block's two rows are independent sums).
template <WeightType T, int N>
std::vector<float> emulate_row(const unsigned char* row, const std::vector<float>& x, int64_t cols) {
  float lane_acc[kWarps][kLanes][1][N] = {};
  const int64_t steps = (cols + cuda::kMatvecStep - 1) / cuda::kMatvecStep;
  const unsigned char* const src[1] = {row};
  for (int w = 0; w < kWarps; ++w)
    for (int64_t k = w; k < steps; k += kWarps)
      for (int l = 0; l < kLanes; ++l) {
        const int64_t c0 = cuda::piece_column(k, l);
        if (c0 < cols) cuda::accumulate_piece<T>(src, x.data(), cols, c0, lane_acc[w][l]);
      }
  std::vector<float> y(N);
  for (int t = 0; t < N; ++t) {
    float partial[kWarps];
    for (int w = 0; w < kWarps; ++w) {
      float v[kLanes];
      for (int l = 0; l < kLanes; ++l) v[l] = lane_acc[w][l][0][t];
      for (int o = kLanes / 2; o > 0; o /= 2) {  // warp_sum: v += shfl_xor(v, o)
        float next[kLanes];
        for (int l = 0; l < kLanes; ++l) next[l] = v[l] + v[l ^ o];
        std::copy(next, next + kLanes, v);
      }
      partial[w] = v[0];
    }
    float s = partial[0];
    for (int w = 1; w < kWarps; ++w) s += partial[w];
    y[t] = s;
  }
  return y;
}

class QuantMatvecEmulation : public ::testing::TestWithParam<TensorType> {};

// One-hot activations: y is the weight at the hot column, exactly, so a
// weight read at the wrong column, read twice or not at all shows. Then
// normal activations against a double-precision dot product of the
// host-widened row: the kernel's order of f32 sums, within 1e-5 of it.
TEST_P(QuantMatvecEmulation, EveryWeightMeetsItsActivationOnce) {
  const TensorType type = GetParam();
  const int64_t k = tensor_type_traits(static_cast<uint32_t>(type))->block_elems;
  std::mt19937 rng(41);
  std::normal_distribution<float> nd;
  for (const int64_t cols : {k == 32 ? int64_t{96} : int64_t{256}, int64_t{4096} + 2 * k, int64_t{8192}}) {
    SCOPED_TRACE("cols " + std::to_string(cols));
    const size_t row_bytes = dense_row_bytes(static_cast<WeightType>(type), cols);
    std::vector<unsigned char> row(row_bytes);
    std::vector<float> v(static_cast<size_t>(cols)), wide(static_cast<size_t>(cols));
    for (auto& e : v) e = nd(rng);
    quantize_row(type, v.data(), row.data(), cols);
    dequantize_row(type, row.data(), wide.data(), cols);
    cuda_testing::with_block_type(type, [&](auto tc) {
      constexpr WeightType T = decltype(tc)::value;
      constexpr int N = 3;
      for (int64_t c = 0; c < cols; c += (c % 8 == 7 ? 57 : 1)) {  // every column of a piece, then skip ahead
        std::vector<float> x(static_cast<size_t>(N * cols), 0.0f);
        for (int t = 0; t < N; ++t) x[t * cols + (c + 8 * t) % cols] = 1.0f;
        const auto y = emulate_row<T, N>(row.data(), x, cols);
        for (int t = 0; t < N; ++t)
          ASSERT_EQ(y[t], wide[(c + 8 * t) % cols]) << "activation row " << t << ", hot column " << (c + 8 * t) % cols;
      }
      std::vector<float> x(static_cast<size_t>(N * cols));
      for (auto& e : x) e = nd(rng);
      const auto y = emulate_row<T, N>(row.data(), x, cols);
      for (int t = 0; t < N; ++t) {
        double want = 0, scale = 0;
        for (int64_t c = 0; c < cols; ++c) {
          want += static_cast<double>(wide[c]) * x[t * cols + c];
          scale += std::abs(static_cast<double>(wide[c]) * x[t * cols + c]);
        }
        EXPECT_NEAR(y[t], want, 1e-5 * scale) << "activation row " << t;
      }
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Types, QuantMatvecEmulation,
                         ::testing::Values(TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                           TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K),
                         [](const auto& param_info) {
                           return std::string(ggml_type_name(static_cast<uint32_t>(param_info.param)));
                         });

}  // namespace
}  // namespace kvgate
