// Sampling on the device: one token from one row of logits that stays in
// device memory, reproducing the CPU Sampler (engine/sampling/sampler.h),
// which this code cannot include, operation for operation where its result
// does not depend on an implementation-defined order:
//
//   temperature 0      the argmax, ties to the lowest id (exact).
//   temperature > 0    weights exp((x - max) / T) with the CPU's own
//                      polynomial exp, in the same IEEE operations (no
//                      contraction, no fast math), summed in the CPU's order
//                      (8-lane float partial sums per 512-token block, then
//                      double); the seeded generator is the CPU's
//                      (std::mt19937_64, top 53 bits as a double in [0, 1)),
//                      one number per draw, none for a greedy or certain one.
//     no top_k/top_p   the draw walks ids in order, block sums first: the
//                      same token as the CPU for the same seed (exact).
//     top_p            the nucleus is the smallest best-first set (weight
//                      descending, then id) reaching top_p of the mass, as
//                      the CPU's; the draw walks it best-first. The CPU walks
//                      the order its quickselect leaves, which is best-first
//                      when at most 64 tokens pass its floor: then the tokens
//                      are the same; beyond that they are drawn from the
//                      same distribution.
//     top_k            the k best logits (ties to the lower id), walked
//                      best-first. With top_p too and k <= 64 the CPU sorts
//                      them the same way (same tokens); with top_k alone it
//                      walks its heap's order (libstdc++'s), so the tokens
//                      differ while the distribution is the same.
//
// Part 1 is correct first: the top-k and nucleus selections sort the row
// with CUB's radix sort and finish on one thread; part 2 makes it fast.
//
// Thread ownership: one DeviceSampler per thread; a generator per sequence.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <random>

#include "kernels/device_buffer.h"

namespace kvgate::cuda {

// The CPU's SamplingParams (validated by the caller), minus the seed, which
// lives in the generator.
struct SamplingChoice {
  float temperature = 1.0f;  // 0 = greedy
  int32_t top_k = 0;         // 0 = off
  float top_p = 1.0f;        // 1 = off
};

// A sequence's generator, seeded as the CPU Sampler seeds its own.
inline std::mt19937_64 sampling_generator(uint64_t seed) { return std::mt19937_64(seed); }

class DeviceSampler {
 public:
  DeviceSampler(int32_t vocab, cudaStream_t stream);

  // Picks an id in [0, vocab) from the device row `logits` (after the work
  // queued on the stream so far). Draws from `rng` only when the CPU Sampler
  // would. Throws kvgate::Error when every logit is -inf or NaN.
  int32_t sample(const float* logits, const SamplingChoice& choice, std::mt19937_64& rng);

 private:
  int32_t vocab_;
  cudaStream_t stream_;
  DeviceBuffer weights_;     // float [vocab]
  DeviceBuffer block_sums_;  // double [blocks]
  DeviceBuffer keys_, sorted_;  // uint64 [vocab]
  DeviceBuffer sort_temp_;
  size_t sort_temp_bytes_ = 0;
  DeviceBuffer state_;       // SampleState
  PinnedBuffer state_host_;
};

}  // namespace kvgate::cuda
