// What follows the Q/K/V projection before RoPE, on the device, against
// the CPU backend's order (engine/cpu/cpu_backend.cpp, finish_q /
// finish_kv): the biases added (bit for bit: one f32 addition each), then
// each Q and K head normalized by engine/cpu/rowwise.h's rmsnorm times the
// head-sized weight (kF32Rel: the sum of squares in another order); V is
// never normalized, and nothing past the row's q, k and v is touched.
#include <random>

#include "engine/cpu/rowwise.h"
#include "kernels/qkv_finish.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

struct Case {
  int32_t heads, kv_heads, head_dim;
  bool bias, norm;
};

class CudaQkvFinish : public CudaTest, public ::testing::WithParamInterface<Case> {};

std::vector<float> normal(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

TEST_P(CudaQkvFinish, BiasThenHeadNormsAreTheCpus) {
  const Case c = GetParam();
  const int32_t qd = c.heads * c.head_dim, kvd = c.kv_heads * c.head_dim, width = qd + 2 * kvd;
  const int32_t stride = width + 3, rows = 37;  // a wider row: its tail must stay as it is
  const float eps = 1e-6f;
  const auto act = normal(static_cast<size_t>(rows) * stride, 1, 3.0f);
  const auto bias = normal(width, 2, 1.0f);
  const auto q_norm = normal(c.head_dim, 3, 1.0f), k_norm = normal(c.head_dim, 4, 1.0f);
  auto dact = to_device(act), dbias = to_device(bias), dq = to_device(q_norm), dk = to_device(k_norm);
  cuda::qkv_finish({dact.as<float>(), stride, c.heads, c.head_dim}, c.kv_heads, rows,
                   c.bias ? dbias.as<float>() : nullptr, c.norm ? dq.as<float>() : nullptr,
                   c.norm ? dk.as<float>() : nullptr, eps, nullptr);
  const auto got = to_host<float>(dact, act.size());

  std::vector<float> want = act;
  for (int32_t r = 0; r < rows; ++r) {
    float* row = &want[static_cast<size_t>(r) * stride];
    if (c.bias)
      for (int32_t j = 0; j < width; ++j) row[j] += bias[j];
    if (c.norm)
      for (int32_t h = 0; h < c.heads + c.kv_heads; ++h) {
        float* v = row + static_cast<int64_t>(h) * c.head_dim;
        rmsnorm(v, v, h < c.heads ? q_norm.data() : k_norm.data(), c.head_dim, eps);
      }
  }
  for (int32_t r = 0; r < rows; ++r) {
    const size_t at = static_cast<size_t>(r) * stride;
    if (!c.norm) {
      for (int32_t j = 0; j < stride; ++j) ASSERT_EQ(got[at + j], want[at + j]) << "row " << r << " value " << j;
      continue;
    }
    for (int32_t h = 0; h < c.heads + c.kv_heads; ++h) {
      const size_t hat = at + static_cast<size_t>(h) * c.head_dim;
      expect_rel_close(std::span(got).subspan(hat, c.head_dim), std::span(want).subspan(hat, c.head_dim), kF32Rel,
                       "row " + std::to_string(r) + " head " + std::to_string(h));
    }
    for (int32_t j = qd + kvd; j < stride; ++j) ASSERT_EQ(got[at + j], want[at + j]) << "v / tail of row " << r;
  }
}

// qwen2 (biases; head_dim 128, G = 7), qwen3 (norms; Q wider than K), both
// at once, gemma3's head_dim 256, and stories' 8 with more heads than warps.
INSTANTIATE_TEST_SUITE_P(Cases, CudaQkvFinish,
                         ::testing::Values(Case{28, 4, 128, true, false}, Case{16, 8, 128, false, true},
                                           Case{4, 2, 64, true, true}, Case{8, 4, 256, false, true},
                                           Case{8, 4, 8, true, true}),
                         [](const auto& param_info) {
                           const Case& c = param_info.param;
                           return std::to_string(c.heads) + "h" + std::to_string(c.kv_heads) + "kv" +
                                  std::to_string(c.head_dim) + "d" + (c.bias ? "_bias" : "") +
                                  (c.norm ? "_norm" : "");
                         });

}  // namespace
}  // namespace kvgate
