// The vector math under sampling: a softmax over a whole vocabulary row in
// AVX2, with a scalar twin that gives bit-identical results, so that a
// seeded draw never depends on where a row's tail falls or on libm.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace kvgate::cpu {

// exp(y) for y <= 0 (a softmax's (logit - max) / T); 0 below -87 and for NaN.
float exp_nonpositive(float y);
// The largest value, skipping NaN; -inf when there is none.
float max_logit(std::span<const float> x);
// Whether any of x[0, 8) is greater than `bar`.
bool any_greater8(const float* x, float bar);
// weights[i] = exp((x[i] - max) / t), 0 for -inf and NaN; returns their sum,
// and the sum of each `block` (a multiple of 8) entries in block_sums.
double softmax_weights(std::span<const float> x, float max, float t, size_t block, std::vector<float>& weights,
                       std::vector<double>& block_sums);

}  // namespace kvgate::cpu
