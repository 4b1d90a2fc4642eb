// The AVX2 math of sampling (see vec_math.h). Pure functions; any thread.
#include "engine/cpu/vec_math.h"

#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "engine/cpu/exp_nonpositive.h"

namespace kvgate::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

// The largest logit; NaN is skipped (max_ps returns its second operand when
// the first is NaN). -inf when there is no other value.
float max_logit(std::span<const float> x) {
  const size_t n = x.size();
  __m256 m[4];
  for (__m256& v : m) v = _mm256_set1_ps(-kInf);
  size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (size_t j = 0; j < 4; ++j) m[j] = _mm256_max_ps(_mm256_loadu_ps(x.data() + i + 8 * j), m[j]);
  for (; i + 8 <= n; i += 8) m[0] = _mm256_max_ps(_mm256_loadu_ps(x.data() + i), m[0]);
  float lanes[8];
  _mm256_storeu_ps(lanes, _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])));
  float best = -kInf;
  for (float v : lanes) best = std::max(best, v);
  for (; i < n; ++i)
    if (x[i] > best) best = x[i];
  return best;
}

// The same operations as exp_nonpositive8 (exp_nonpositive.h), one lane.
float exp_nonpositive(float y) { return exp_nonpositive1(y); }

bool any_greater8(const float* x, float bar) {
  return _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x), _mm256_set1_ps(bar), _CMP_GT_OQ)) != 0;
}

double softmax_weights(std::span<const float> x, float max, float t, size_t block, std::vector<float>& weights,
                       std::vector<double>& block_sums) {
  const size_t n = x.size();
  weights.resize(n);
  block_sums.assign((n + block - 1) / block, 0.0);
  const __m256 vmax = _mm256_set1_ps(max), vt = _mm256_set1_ps(t);
  double total = 0;
  for (size_t b = 0; b * block < n; ++b) {
    const size_t end = std::min(n, (b + 1) * block);
    __m256 acc = _mm256_setzero_ps();
    size_t i = b * block;
    for (; i + 8 <= end; i += 8) {
      // Division, not a multiply by 1/T: a tiny T then gives 0/T = 0 for the
      // max rather than 0 * inf = NaN.
      __m256 w = exp_nonpositive8(_mm256_div_ps(_mm256_sub_ps(_mm256_loadu_ps(x.data() + i), vmax), vt));
      _mm256_storeu_ps(weights.data() + i, w);
      acc = _mm256_add_ps(acc, w);
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, acc);
    double sum = 0;
    for (float v : lanes) sum += v;
    for (; i < end; ++i) {
      weights[i] = exp_nonpositive((x[i] - max) / t);
      sum += weights[i];
    }
    block_sums[b] = sum;
    total += sum;
  }
  return total;
}

}  // namespace kvgate::cpu
