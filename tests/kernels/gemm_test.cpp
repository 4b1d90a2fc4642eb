// The linear layer against the CPU's matmul: f32 weights within the f32
// tolerance, f16 / bf16 weights (activations narrowed to them) within
// theirs, Q8_0 and the other block types through both of their paths (the
// mat-vec for decode, widened for cuBLAS above it) within the f32
// tolerance, and
// beta = 1 adding the product into what y held (the residual).
#include <random>

#include "engine/cpu/matmul.h"
#include "engine/model/float_convert.h"
#include "kernels/gemm.h"
#include "kernels/q8_0_matvec.h"
#include "kernels/quant_matvec.h"
#include "kernels/widen_plan.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

// y = x W^T (beta 0) and y += x W^T (beta 1) for n random rows x, against
// the CPU's matmul on cpu_w, the same weights.
void expect_linear_matches(cuda::Gemm& gemm, const cuda::DeviceMatrix& w, const Matrix& cpu_w, int64_t n, double tol,
                           const std::string& what, std::mt19937& rng) {
  std::normal_distribution<float> nd;
  std::vector<float> x(static_cast<size_t>(n * w.cols)), y0(static_cast<size_t>(n * w.rows));
  for (auto& v : x) v = nd(rng);
  for (auto& v : y0) v = nd(rng);
  std::vector<float> want(y0.size());
  matmul(cpu_w, x.data(), n, want.data());
  auto dx = to_device(x), dy = to_device(y0);
  gemm.linear(w, dx.as<float>(), n, dy.as<float>(), w.rows, 0.0f);
  expect_rel_close(to_host<float>(dy, y0.size()), want, tol, "y = x W^T, " + what);
  auto dr = to_device(y0);
  gemm.linear(w, dx.as<float>(), n, dr.as<float>(), w.rows, 1.0f);
  for (size_t i = 0; i < want.size(); ++i) want[i] += y0[i];
  expect_rel_close(to_host<float>(dr, y0.size()), want, tol, "y += x W^T, " + what);
}

class CudaGemm : public CudaTest, public ::testing::WithParamInterface<TensorType> {};

TEST_P(CudaGemm, LinearMatchesTheCpusMatmul) {
  const TensorType type = GetParam();
  const double tol = type == TensorType::F32 ? kF32Rel : type == TensorType::F16 ? kF16Rel : kBF16Rel;
  const int64_t rows = 160, cols = 96;
  const size_t elem = type == TensorType::F32 ? 4 : 2;
  std::mt19937 rng(13);
  std::normal_distribution<float> nd;
  std::vector<float> wf(static_cast<size_t>(rows * cols));
  for (auto& x : wf) x = nd(rng);
  std::vector<unsigned char> stored(wf.size() * elem);
  for (int64_t r = 0; r < rows; ++r) quantize_row(type, &wf[r * cols], stored.data() + r * cols * elem, cols);
  const Matrix cpu_w{type, rows, cols, static_cast<size_t>(cols) * elem, reinterpret_cast<const std::byte*>(stored.data())};

  cuda::DeviceMatrix w;
  w.type = static_cast<WeightType>(type), w.rows = rows, w.cols = cols, w.row_bytes = static_cast<size_t>(cols) * elem;
  w.storage = to_device(stored);
  w.data = w.storage.as();
  cuda::Gemm gemm(nullptr);
  for (const int64_t n : {int64_t{1}, int64_t{5}, int64_t{64}})  // decode, a small batch, a prefill
    expect_linear_matches(gemm, w, cpu_w, n, tol, "n " + std::to_string(n), rng);
}

INSTANTIATE_TEST_SUITE_P(Types, CudaGemm, ::testing::Values(TensorType::F32, TensorType::F16, TensorType::BF16),
                         [](const auto& param_info) { return std::string(tensor_type_traits(static_cast<uint32_t>(param_info.param))->name); });

// Q8_0 weights on the device, in their 34 bytes per 32, against the CPU's
// matmul on the same weights widened to F32 (dequantize_row: the values the
// device widens to, bit for bit). Not the CPU's Q8_0 matmul itself: at one
// row it quantizes the activations to int8 as llama.cpp does (matmul.cpp),
// which the device does not, so it is 1/200 from the f32 product, not 1e-4.
// Widths of 96 (one short chunk of 3 blocks), 4,096 (rows 16-byte aligned,
// 8 whole chunks of 16 blocks) and 4,128 (a short last chunk, and rows only
// 2-byte aligned in turn: row_bytes is 4,386); n up to kQ8_0MatvecMaxRows
// in one mat-vec pass, 9 and 64 in passes (two, the last of one row; and
// eight), 65 through the widened f32 GEMM; 37 rows (odd: the mat-vec's last
// block has a row to spare).
using CudaGemmQ8_0 = CudaTest;

TEST_F(CudaGemmQ8_0, LinearMatchesTheCpusF32MatmulOnTheSameWeights) {
  using cuda::kQ8_0MatvecMaxRows, cuda::kBlockPassedRows;
  static_assert(kQ8_0MatvecMaxRows == 8 && kBlockPassedRows == 64, "the n below cover every path");
  std::mt19937 rng(17);
  std::normal_distribution<float> nd;
  cuda::Gemm gemm(nullptr);
  for (const int64_t cols : {int64_t{96}, int64_t{4096}, int64_t{4096 + 32}}) {
    const int64_t rows = 37;
    const size_t row_bytes = static_cast<size_t>(cols / kQ8_0Block) * sizeof(BlockQ8_0);
    std::vector<unsigned char> stored(rows * row_bytes);
    std::vector<float> wide(static_cast<size_t>(rows * cols)), row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (auto& v : row) v = nd(rng);
      quantize_row(TensorType::Q8_0, row.data(), stored.data() + r * row_bytes, cols);
      dequantize_row(TensorType::Q8_0, stored.data() + r * row_bytes, &wide[r * cols], cols);
    }
    const Matrix cpu_w{TensorType::F32, rows, cols, static_cast<size_t>(cols) * sizeof(float),
                       reinterpret_cast<const std::byte*>(wide.data())};
    cuda::DeviceMatrix w;
    w.type = WeightType::kQ8_0, w.rows = rows, w.cols = cols, w.row_bytes = row_bytes;
    w.storage = to_device(stored);
    w.data = w.storage.as();
    for (const int64_t n : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{8}, int64_t{9}, int64_t{64}, int64_t{65}}) {
      const std::string what = "cols " + std::to_string(cols) + ", n " + std::to_string(n) +
                               (n <= kQ8_0MatvecMaxRows ? " (mat-vec)"
                                : n <= kBlockPassedRows  ? " (mat-vec passes)"
                                                        : " (widened)");
      expect_linear_matches(gemm, w, cpu_w, n, kF32Rel, what, rng);
    }
  }
}

// The other block types as Q8_0 above, through quant_matvec (n up to 64)
// and widened (65): widths of one k-quant block (or eight 32-value blocks)
// and of 4,096 plus two blocks (a warp's last step short), 37 rows.
class CudaGemmBlocks : public CudaTest, public ::testing::WithParamInterface<TensorType> {};

TEST_P(CudaGemmBlocks, LinearMatchesTheCpusF32MatmulOnTheSameWeights) {
  static_assert(cuda::kQuantMatvecMaxRows == 8 && cuda::kBlockPassedRows == 64, "the n below cover every path");
  const TensorType type = GetParam();
  const auto wt = static_cast<WeightType>(type);
  const int64_t k = weight_block(wt).values;
  std::mt19937 rng(31);
  std::normal_distribution<float> nd;
  cuda::Gemm gemm(nullptr);
  for (const int64_t cols : {int64_t{256}, 4096 + 2 * k}) {
    const int64_t rows = 37;
    const size_t row_bytes = dense_row_bytes(wt, cols);
    std::vector<unsigned char> stored(rows * row_bytes);
    std::vector<float> wide(static_cast<size_t>(rows * cols)), row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (auto& v : row) v = nd(rng);
      quantize_row(type, row.data(), stored.data() + r * row_bytes, cols);
      dequantize_row(type, stored.data() + r * row_bytes, &wide[r * cols], cols);
    }
    const Matrix cpu_w{TensorType::F32, rows, cols, static_cast<size_t>(cols) * sizeof(float),
                       reinterpret_cast<const std::byte*>(wide.data())};
    cuda::DeviceMatrix w;
    w.type = wt, w.rows = rows, w.cols = cols, w.row_bytes = row_bytes;
    w.storage = to_device(stored);
    w.data = w.storage.as();
    for (const int64_t n : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{9}, int64_t{64}, int64_t{65}}) {
      const std::string what = "cols " + std::to_string(cols) + ", n " + std::to_string(n) +
                               (n <= cuda::kBlockPassedRows ? " (mat-vec)" : " (widened)");
      expect_linear_matches(gemm, w, cpu_w, n, kF32Rel, what, rng);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaGemmBlocks,
                         ::testing::Values(TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                           TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K),
                         [](const auto& param_info) { return std::string(tensor_type_traits(static_cast<uint32_t>(param_info.param))->name); });

// A fused matrix whose runs differ in type (a Q4_K_M Q/K/V: Q4_K rows,
// then Q6_K), tall enough that the widened path takes two chunks
// (widen_plan.h), the first holding the Q4_K run and the Q6_K run's first
// rows: each run's passes land in its rows of y, each chunk's GEMM in its
// columns.
using CudaGemmMixedBlocks = CudaTest;

TEST_F(CudaGemmMixedBlocks, RunsOfTwoTypesAndChunkedWideningMatchTheCpu) {
  const int64_t cols = 4096, chunk = cuda::widen_chunk_rows(cols);
  const int64_t q4_rows = chunk - 10, q6_rows = 60, rows = q4_rows + q6_rows;
  const size_t q4_bytes = dense_row_bytes(WeightType::kQ4_K, cols), q6_bytes = dense_row_bytes(WeightType::kQ6_K, cols);
  std::vector<unsigned char> stored(q4_rows * q4_bytes + q6_rows * q6_bytes);
  std::vector<float> wide(static_cast<size_t>(rows * cols)), row(static_cast<size_t>(cols));
  std::mt19937 rng(37);
  std::normal_distribution<float> nd;
  for (int64_t r = 0; r < rows; ++r) {
    const bool q4 = r < q4_rows;
    const TensorType t = q4 ? TensorType::Q4_K : TensorType::Q6_K;
    unsigned char* at = stored.data() + (q4 ? r * q4_bytes : q4_rows * q4_bytes + (r - q4_rows) * q6_bytes);
    for (auto& v : row) v = nd(rng);
    quantize_row(t, row.data(), at, cols);
    dequantize_row(t, at, &wide[r * cols], cols);
  }
  const Matrix cpu_w{TensorType::F32, rows, cols, static_cast<size_t>(cols) * sizeof(float),
                     reinterpret_cast<const std::byte*>(wide.data())};
  cuda::DeviceMatrix w;
  w.type = WeightType::kQ4_K, w.rows = rows, w.cols = cols, w.row_bytes = q4_bytes;
  w.storage = to_device(stored);
  w.data = w.storage.as();
  const auto* base = w.storage.as<std::byte>();
  w.parts = {{WeightType::kQ4_K, q4_rows, q4_bytes, base}, {WeightType::kQ6_K, q6_rows, q6_bytes, base + q4_rows * q4_bytes}};
  cuda::Gemm gemm(nullptr);
  for (const int64_t n : {int64_t{1}, int64_t{9}, int64_t{65}})
    expect_linear_matches(gemm, w, cpu_w, n, kF32Rel, "n " + std::to_string(n), rng);
}

// The mat-vec's weights are the host's, bit for bit: with x one-hot at
// column c every other product is an exact zero, so y[r] is w[r][c] as
// dequantize_row widens it, whichever lane, chunk or copy path read it.
TEST_F(CudaGemmQ8_0, MatvecWidensExactlyAsTheHost) {
  const int64_t rows = 3, cols = 4096 + 32;
  const size_t row_bytes = static_cast<size_t>(cols / kQ8_0Block) * sizeof(BlockQ8_0);
  std::mt19937 rng(19);
  std::normal_distribution<float> nd;
  std::vector<unsigned char> stored(rows * row_bytes);
  std::vector<float> wide(static_cast<size_t>(rows * cols)), row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = nd(rng) * (r == 1 ? 1e-4f : 1.0f);  // row 1: scales among f16's subnormals
    quantize_row(TensorType::Q8_0, row.data(), stored.data() + r * row_bytes, cols);
    dequantize_row(TensorType::Q8_0, stored.data() + r * row_bytes, &wide[r * cols], cols);
  }
  auto dw = to_device(stored);
  for (const int64_t c : {int64_t{0}, int64_t{3}, int64_t{16}, int64_t{17}, int64_t{33}, int64_t{511}, int64_t{512},
                          cols - 33, cols - 1}) {
    std::vector<float> x(static_cast<size_t>(cols), 0.0f);
    x[c] = 1.0f;
    auto dx = to_device(x);
    auto dy = to_device(std::vector<float>(rows, 0.0f));
    cuda::q8_0_matvec(dw.as(), row_bytes, rows, cols, dx.as<float>(), 1, dy.as<float>(), rows, 0.0f, nullptr);
    const auto y = to_host<float>(dy, rows);
    for (int64_t r = 0; r < rows; ++r)
      EXPECT_EQ(y[r], wide[r * cols + c]) << "row " << r << ", column " << c;
  }
}

}  // namespace
}  // namespace kvgate
