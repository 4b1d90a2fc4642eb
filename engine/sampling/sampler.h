// Sampler: one token from one row of logits, the way an OpenAI-style API
// reads temperature / top_k / top_p / seed.
//
// temperature 0 is greedy: the argmax, ties to the lowest id, no randomness.
// Otherwise, in this order (vLLM's and llama.cpp's order): keep the top_k
// highest logits (0 = all), softmax them at the temperature, keep the
// smallest most-probable set whose probability reaches top_p (at least one
// token), and draw from what is left with the sampler's own seeded PRNG.
// Same seed and same sequence of logits give the same tokens on every run
// and machine: the PRNG, the float-to-uniform mapping and exp are ours, not
// the implementation-defined std:: distributions or libm.
//
// Cost on a 128k vocabulary is a few passes over the row: no sort of the
// whole vocabulary, whatever the parameters. -inf (masked) and NaN logits
// have probability 0.
//
// A Sampler keeps PRNG state and scratch space between calls: one per
// sequence, not shared between threads.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "cache/ids.h"
#include "engine/sampling/sampling_params.h"

namespace kvgate {

class Sampler {
 public:
  // `params` were validated (validate(), at submission): not checked again.
  explicit Sampler(const SamplingParams& params);

  // Picks a token id in [0, logits.size()). Throws kvgate::Error if the row
  // is empty or every logit is -inf or NaN.
  TokenId sample(std::span<const float> logits);

  const SamplingParams& params() const { return params_; }

 private:
  struct Candidate {
    float weight;  // the logit until softmax, then the unnormalised probability
    TokenId id;
  };
  TokenId sample_all(std::span<const float> logits, float max);
  TokenId sample_top_k(std::span<const float> logits, size_t k);
  void select_top_k(std::span<const float> logits, size_t k);
  size_t keep_top_p(size_t n, double need);
  TokenId draw(size_t n);
  double uniform01();

  SamplingParams params_;
  std::mt19937_64 rng_;
  // Scratch, reused so that a decode step does not allocate.
  std::vector<Candidate> cand_;
  std::vector<float> weights_;       // per token, when no top_k narrows the row
  std::vector<double> block_sums_;   // of weights_, per block, for a fast draw
};

}  // namespace kvgate
