// The cuBLAS linear layer against the CPU's matmul: f32 weights within the
// f32 tolerance, f16 / bf16 weights (activations narrowed to them) within
// theirs, and beta = 1 adding the product into what y held (the residual).
#include <random>

#include "engine/cpu/matmul.h"
#include "engine/model/float_convert.h"
#include "kernels/gemm.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

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
  w.type = static_cast<WeightType>(type), w.rows = rows, w.cols = cols;
  w.storage = to_device(stored);
  w.data = w.storage.as();
  cuda::Gemm gemm(nullptr);
  for (const int64_t n : {int64_t{1}, int64_t{5}, int64_t{64}}) {  // decode, a small batch, a prefill
    std::vector<float> x(static_cast<size_t>(n * cols)), y0(static_cast<size_t>(n * rows));
    for (auto& v : x) v = nd(rng);
    for (auto& v : y0) v = nd(rng);
    std::vector<float> want(y0.size());
    matmul(cpu_w, x.data(), n, want.data());
    auto dx = to_device(x), dy = to_device(y0);
    gemm.linear(w, dx.as<float>(), n, dy.as<float>(), rows, 0.0f);
    expect_rel_close(to_host<float>(dy, y0.size()), want, tol, "y = x W^T, n " + std::to_string(n));
    auto dr = to_device(y0);
    gemm.linear(w, dx.as<float>(), n, dr.as<float>(), rows, 1.0f);
    for (size_t i = 0; i < want.size(); ++i) want[i] += y0[i];
    expect_rel_close(to_host<float>(dr, y0.size()), want, tol, "y += x W^T, n " + std::to_string(n));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaGemm, ::testing::Values(TensorType::F32, TensorType::F16, TensorType::BF16),
                         [](const auto& param_info) { return std::string(tensor_type_traits(static_cast<uint32_t>(param_info.param))->name); });

}  // namespace
}  // namespace kvgate
