// The device sampler against the CPU Sampler: the same seed gives the same
// tokens wherever the CPU's choice does not depend on an implementation-
// defined order (kernels/sampling.h says where that is), the generator
// advances exactly when the CPU's does, and masked rows fail alike.
#include <cmath>
#include <limits>
#include <random>

#include "base/error.h"
#include "engine/sampling/sampler.h"
#include "kernels/sampling.h"
#include "tests/kernels/cuda_test_support.h"

namespace kvgate {
namespace {

using namespace cuda_testing;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> logits_row(int32_t vocab, uint32_t seed, float spread) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, spread);
  std::vector<float> v(vocab);
  for (auto& x : v) x = nd(rng);
  return v;
}

// Draws `steps` tokens from each, one row per step (a new row each step, so
// that both generators are exercised across rows), and expects them equal.
void expect_same_tokens(const SamplingParams& p, int32_t vocab, float spread, int steps) {
  Sampler cpu(p);
  cuda::DeviceSampler gpu(vocab, nullptr);
  auto rng = cuda::sampling_generator(p.seed);
  for (int s = 0; s < steps; ++s) {
    const auto row = logits_row(vocab, 100 + s, spread);
    auto d = to_device(row);
    const TokenId want = cpu.sample(row);
    const int32_t got = gpu.sample(d.as<float>(), {p.temperature, p.top_k, p.top_p}, rng);
    ASSERT_EQ(got, want) << "step " << s << " (T " << p.temperature << ", top_k " << p.top_k << ", top_p "
                         << p.top_p << ", seed " << p.seed << ")";
  }
}

using CudaSampling = CudaTest;

TEST_F(CudaSampling, GreedyIsTheFirstMaximum) {
  expect_same_tokens({.temperature = 0}, 32000, 3.0f, 20);
  std::vector<float> tie(1000, 1.0f);
  tie[10] = tie[700] = 5.0f;
  tie[3] = std::nanf("");
  auto d = to_device(tie);
  cuda::DeviceSampler gpu(1000, nullptr);
  auto rng = cuda::sampling_generator(1);
  const auto before = rng;
  EXPECT_EQ(gpu.sample(d.as<float>(), {0.0f, 0, 1.0f}, rng), 10);
  EXPECT_TRUE(rng == before) << "a greedy pick draws nothing";
}

TEST_F(CudaSampling, WholeVocabularyDrawsTheCpusTokens) {
  for (const uint64_t seed : {1ull, 42ull, 123456789ull})
    for (const float t : {0.7f, 1.0f, 1.5f}) {
      expect_same_tokens({.temperature = t, .seed = seed}, 32000, 2.0f, 50);
      expect_same_tokens({.temperature = t, .seed = seed}, 1001, 1.0f, 50);  // a vocabulary with a tail block
    }
}

TEST_F(CudaSampling, TopPOnAPeakedRowDrawsTheCpusTokens) {
  // Rows where at most 64 tokens pass the CPU's floor, so its order is
  // best-first: a 64-token vocabulary, and a very peaked 32000-token row.
  for (const uint64_t seed : {3ull, 77ull})
    for (const float p : {0.5f, 0.9f}) {
      expect_same_tokens({.temperature = 1.0f, .top_p = p, .seed = seed}, 64, 1.5f, 50);
      expect_same_tokens({.temperature = 1.0f, .top_p = p, .seed = seed}, 32000, 25.0f, 50);
    }
}

TEST_F(CudaSampling, TopKWithTopPDrawsTheCpusTokens) {
  for (const int32_t k : {1, 8, 40, 64})
    expect_same_tokens({.temperature = 0.8f, .top_k = k, .top_p = 0.95f, .seed = 5}, 32000, 2.0f, 50);
}

TEST_F(CudaSampling, TopKAloneStaysInsideTheTopK) {
  // The CPU walks its heap's order here (kernels/sampling.h): the same
  // distribution, not the same tokens. What must hold: a top-k token, and
  // the same token again for the same seed.
  const int32_t vocab = 32000, k = 20;
  cuda::DeviceSampler gpu(vocab, nullptr);
  for (int s = 0; s < 30; ++s) {
    const auto row = logits_row(vocab, 300 + s, 2.0f);
    auto d = to_device(row);
    auto rng1 = cuda::sampling_generator(9), rng2 = cuda::sampling_generator(9);
    const int32_t a = gpu.sample(d.as<float>(), {1.0f, k, 1.0f}, rng1);
    EXPECT_EQ(gpu.sample(d.as<float>(), {1.0f, k, 1.0f}, rng2), a);
    int32_t better = 0;
    for (float x : row) better += x > row[a];
    EXPECT_LT(better, k) << "token " << a << " is not among the top " << k;
  }
}

TEST_F(CudaSampling, InfinitiesAndMaskedRowsAsTheCpu) {
  std::vector<float> row(600, -kInf);
  row[5] = 1.0f, row[400] = kInf, row[450] = kInf;
  auto d = to_device(row);
  cuda::DeviceSampler gpu(600, nullptr);
  for (const cuda::SamplingChoice c : {cuda::SamplingChoice{1.0f, 0, 1.0f}, cuda::SamplingChoice{1.0f, 10, 0.9f}}) {
    auto rng = cuda::sampling_generator(4);
    const auto before = rng;
    EXPECT_EQ(gpu.sample(d.as<float>(), c, rng), 400) << "+inf is certain: the first of them";
    EXPECT_TRUE(rng == before);
  }
  std::vector<float> masked(600, -kInf);
  masked[7] = std::nanf("");
  auto dm = to_device(masked);
  auto rng = cuda::sampling_generator(4);
  for (const cuda::SamplingChoice c : {cuda::SamplingChoice{0.0f, 0, 1.0f}, cuda::SamplingChoice{1.0f, 0, 1.0f},
                                       cuda::SamplingChoice{1.0f, 5, 1.0f}, cuda::SamplingChoice{1.0f, 0, 0.5f}})
    EXPECT_THROW(gpu.sample(dm.as<float>(), c, rng), Error);
}

}  // namespace
}  // namespace kvgate
