// RMSNorm, the post-norm's RMSNorm-and-add, SwiGLU, GeGLU and the logits'
// soft-capping on the device against engine/cpu/rowwise.h and the CPU
// backend's expressions (RoPE: rope_kv_store_test.cpp).
#include <random>

#include "engine/cpu/rowwise.h"
#include "engine/model/float_convert.h"
#include "kernels/rmsnorm.h"
#include "kernels/softcap.h"
#include "kernels/swiglu.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

std::vector<float> normal(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

using CudaRowwise = CudaTest;

TEST_F(CudaRowwise, RmsNormOfGatheredRowsMatchesTheCpu) {
  for (const int32_t dim : {8, 64, 288, 4096}) {
    const int32_t rows = 9;
    const auto x = normal(static_cast<size_t>(rows) * dim, 1, 3.0f);
    const auto w = normal(dim, 2);
    const std::vector<int32_t> pick{8, 0, 3, 3};
    auto dx = to_device(x), dw = to_device(w), dp = to_device(pick);
    cuda::DeviceBuffer dout(pick.size() * dim * sizeof(float), "out");
    cuda::rmsnorm_rows(dx.as<float>(), dp.as<int32_t>(), static_cast<int64_t>(pick.size()), dw.as<float>(), dim,
                       1e-5f, dout.as(), WeightType::kF32, nullptr);
    const auto got = to_host<float>(dout, pick.size() * dim);
    for (size_t r = 0; r < pick.size(); ++r) {
      std::vector<float> want(dim);
      rmsnorm(want.data(), &x[static_cast<size_t>(pick[r]) * dim], w.data(), dim, 1e-5f);
      expect_rel_close(std::span(got).subspan(r * dim, dim), want, kF32Rel, "rmsnorm dim " + std::to_string(dim));
    }
  }
}

// A gated activation on the device (gate then up in each row of `gu`, as
// the fused gate/up GEMM writes them) against the CPU's in-place form.
template <typename Device, typename Cpu>
void expect_gated_matches_cpu(Device device, Cpu cpu, uint32_t seed, const char* what) {
  const int32_t rows = 7, ffn = 688;
  const auto gu = normal(static_cast<size_t>(rows) * 2 * ffn, seed, 4.0f);
  auto dgu = to_device(gu);
  cuda::DeviceBuffer dout(static_cast<size_t>(rows) * ffn * sizeof(float), "out");
  device(dgu.as<float>(), rows, ffn, dout.as(), WeightType::kF32, nullptr);
  const auto got = to_host<float>(dout, static_cast<size_t>(rows) * ffn);
  for (int32_t r = 0; r < rows; ++r) {
    std::vector<float> gate(gu.begin() + r * 2 * ffn, gu.begin() + r * 2 * ffn + ffn);
    cpu(gate.data(), &gu[static_cast<size_t>(r) * 2 * ffn + ffn], ffn);
    expect_rel_close(std::span(got).subspan(static_cast<size_t>(r) * ffn, ffn), gate, kF32Rel, what);
  }
}

TEST_F(CudaRowwise, SwiGluMatchesTheCpu) { expect_gated_matches_cpu(cuda::swiglu_rows, swiglu, 4, "swiglu"); }

// gemma's post-norm: the CPU normalizes the block's output in place, then
// adds it to the residual (cpu_backend.cpp, norm_in_place, add_rows).
TEST_F(CudaRowwise, RmsNormAddIsTheCpusNormThenAdd) {
  for (const int32_t dim : {64, 2304}) {
    const int32_t rows = 5;
    const auto h = normal(static_cast<size_t>(rows) * dim, 11, 3.0f);
    const auto x = normal(static_cast<size_t>(rows) * dim, 12, 2.0f);
    const auto w = normal(dim, 13);
    auto dh = to_device(h), dx = to_device(x), dw = to_device(w);
    cuda::rmsnorm_add_rows(dh.as<float>(), rows, dw.as<float>(), dim, 1e-6f, dx.as<float>(), nullptr);
    const auto got = to_host<float>(dx, x.size());
    for (int32_t r = 0; r < rows; ++r) {
      std::vector<float> want(dim);
      rmsnorm(want.data(), &h[static_cast<size_t>(r) * dim], w.data(), dim, 1e-6f);
      for (int32_t i = 0; i < dim; ++i) want[i] += x[static_cast<size_t>(r) * dim + i];
      expect_rel_close(std::span(got).subspan(static_cast<size_t>(r) * dim, dim), want, kF32Rel,
                       "rmsnorm_add dim " + std::to_string(dim));
    }
  }
}

// GeGLU in f32, the tanh form, against the CPU's geglu (values past +-5
// included, where tanh saturates).
TEST_F(CudaRowwise, GeGluMatchesTheCpu) { expect_gated_matches_cpu(cuda::geglu_rows, geglu, 14, "geglu"); }

// Final-logit soft-capping as the CPU's head computes it:
// tanh(x * (1 / cap)) * cap, over more values than one grid covers.
TEST_F(CudaRowwise, SoftCapMatchesTheCpu) {
  const auto x = normal(3 * 4096 * 256 + 17, 15, 40.0f);
  auto dx = to_device(x);
  cuda::softcap_values(dx.as<float>(), static_cast<int64_t>(x.size()), 30.0f, nullptr);
  const auto got = to_host<float>(dx, x.size());
  std::vector<float> want = x;
  const float inv = 1.0f / 30.0f;
  for (auto& v : want) v = std::tanh(v * inv) * 30.0f;
  expect_rel_close(got, want, kF32Rel, "soft-capped logits");
}

// The half-precision outputs feed a GEMM directly: each value must be the
// f32 result rounded to nearest even, bit for bit what narrowing the f32
// output would give.
TEST_F(CudaRowwise, HalfOutputsAreTheF32OutputsRounded) {
  const int32_t rows = 3, dim = 288, ffn = 688;
  const auto x = normal(static_cast<size_t>(rows) * dim, 5, 3.0f);
  const auto w = normal(dim, 6);
  const auto gu = normal(static_cast<size_t>(rows) * 2 * ffn, 7, 4.0f);
  auto dx = to_device(x), dw = to_device(w), dgu = to_device(gu);
  cuda::DeviceBuffer norm32(static_cast<size_t>(rows) * dim * 4, "out"), act32(static_cast<size_t>(rows) * ffn * 4, "out");
  cuda::rmsnorm_rows(dx.as<float>(), nullptr, rows, dw.as<float>(), dim, 1e-5f, norm32.as(), WeightType::kF32, nullptr);
  cuda::swiglu_rows(dgu.as<float>(), rows, ffn, act32.as(), WeightType::kF32, nullptr);
  const auto norm = to_host<float>(norm32, static_cast<size_t>(rows) * dim);
  const auto act = to_host<float>(act32, static_cast<size_t>(rows) * ffn);
  for (const WeightType t : {WeightType::kF16, WeightType::kBF16}) {
    const auto narrow = [t](float v) { return t == WeightType::kF16 ? f32_to_f16(v) : f32_to_bf16(v); };
    const char* name = t == WeightType::kF16 ? "f16" : "bf16";
    cuda::DeviceBuffer norm16(norm.size() * 2, "out"), act16(act.size() * 2, "out");
    cuda::rmsnorm_rows(dx.as<float>(), nullptr, rows, dw.as<float>(), dim, 1e-5f, norm16.as(), t, nullptr);
    cuda::swiglu_rows(dgu.as<float>(), rows, ffn, act16.as(), t, nullptr);
    const auto got_norm = to_host<uint16_t>(norm16, norm.size());
    const auto got_act = to_host<uint16_t>(act16, act.size());
    for (size_t i = 0; i < norm.size(); ++i) ASSERT_EQ(got_norm[i], narrow(norm[i])) << name << " rmsnorm element " << i;
    for (size_t i = 0; i < act.size(); ++i) ASSERT_EQ(got_act[i], narrow(act[i])) << name << " swiglu element " << i;
  }
}

}  // namespace
}  // namespace kvgate
