// How a request wants its tokens drawn, as the OpenAI API's temperature,
// top_p and seed (and top_k, as vLLM and llama.cpp add). Validated once, at
// submission; the Sampler trusts what it is given.
#pragma once

#include <cstdint>

namespace kvgate {

struct SamplingParams {
  float temperature = 1.0f;  // 0 = greedy
  int32_t top_k = 0;         // 0 = off
  float top_p = 1.0f;        // 1 = off
  uint64_t seed = 0;
};

// Throws kvgate::Error naming the first bad field (temperature, top_k, top_p).
void validate(const SamplingParams& p);

}  // namespace kvgate
