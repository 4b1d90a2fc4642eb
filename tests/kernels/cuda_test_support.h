// What the CUDA parity suites share: the skip when no device is present,
// the named tolerances every comparison with the CPU reference uses, and
// copies between host vectors and device buffers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/cuda_backend.h"
#include "kernels/device_buffer.h"

namespace kvgate::cuda_testing {

// Tolerances, relative to the largest magnitude in the reference row (so
// that a near-zero element is not held to an impossible relative bound).
// F32 kernels: the CPU's own arithmetic in another order, a few ulps.
inline constexpr double kF32Rel = 1e-4;
// Half-precision storage or GEMM inputs: f16 keeps 11 significant bits
// (2^-11 = 4.9e-4 per rounding), bf16 8 (2^-8 = 3.9e-3); a dot product of
// rounded inputs errs by about that, so twice the unit roundoff.
inline constexpr double kF16Rel = 1e-3;
inline constexpr double kBF16Rel = 8e-3;
// Prefill attention on the tensor cores (f16 / bf16 K/V, head_dim a
// multiple of 16: prefill_attention.cu) rounds Q and P to the K/V type.
// kF16Rel / kBF16Rel (about twice the unit roundoff u: 1e-3, 8e-3) bound one
// dot product of rounded inputs, and are too tight for it. Attention with
// rounded Q and P chains two roundings into every weight -- the score's (Q x
// scale rounded: an absolute error of about u in a score of unit size, so a
// relative u in its exp) and P's own -- and the output mixes those weight
// errors with differences of V rows, which can exceed the output's largest
// element (the tolerance's scale) when a row attends to a few positions. An
// emulation of the kernel's arithmetic on prefill_attention_test's chunks and shapes
// (random normal Q, K, V; double reference) gave worst row errors of
// 4.7e-4 .. 5.6e-4 for f16 (1.1 u) and 3.1e-3 .. 6.1e-3 for bf16 (up to
// 1.55 u, within 1.3x of kBF16Rel) over a few seeds. These allow 4u, so a
// test over thousands of rows does not fail by chance, while a wrong mask,
// row, head or rescale (errors of order 1) still fails by far.
inline constexpr double kAttentionF16Rel = 2e-3;   // 4 x 2^-11
inline constexpr double kAttentionBF16Rel = 1.6e-2;  // 4 x 2^-8
// A whole forward pass in f32 (many layers of GEMMs in cuBLAS's order).
inline constexpr double kForwardF32Rel = 1e-3;
// A forward pass through f16 / bf16 GEMMs or K/V: every layer adds its
// roundings; what the issue calls "within their precision" for a model.
inline constexpr double kForwardF16Rel = 2e-2;
inline constexpr double kForwardBF16Rel = 8e-2;

inline bool has_device() {
  static const bool yes = cuda_device_count() > 0;
  return yes;
}

// Every CUDA parity test derives from this: without a device (this
// project's CI machines) it skips, saying why, instead of failing.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!has_device())
      GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount reports none): the CUDA parity tests run on a GPU "
                      "machine, by ops/gpu-check";
  }
};

// Expects |got - want| <= rel * max |want| element-wise, naming the worst.
inline void expect_rel_close(std::span<const float> got, std::span<const float> want, double rel,
                             const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (float w : want) scale = std::max(scale, static_cast<double>(std::abs(w)));
  scale = std::max(scale, 1e-30);
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(static_cast<double>(got[i]) - want[i]);
    if (!(e <= worst)) worst = e, at = i;  // NaN counts as the worst
  }
  EXPECT_LE(worst / scale, rel) << what << ": element " << at << " is " << got[at] << ", the CPU's " << want[at]
                                << " (largest |reference| " << scale << ")";
}

template <typename T>
cuda::DeviceBuffer to_device(const std::vector<T>& v) {
  cuda::DeviceBuffer b(v.size() * sizeof(T), "test data");
  cuda::check(cudaMemcpy(b.as(), v.data(), b.bytes(), cudaMemcpyHostToDevice), "test upload");
  return b;
}

template <typename T>
std::vector<T> to_host(const cuda::DeviceBuffer& b, size_t n) {
  std::vector<T> v(n);
  cuda::check(cudaDeviceSynchronize(), "test sync");
  cuda::check(cudaMemcpy(v.data(), b.as(), n * sizeof(T), cudaMemcpyDeviceToHost), "test download");
  return v;
}

}  // namespace kvgate::cuda_testing
