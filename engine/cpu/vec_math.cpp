// The AVX2 math of sampling (see vec_math.h). Pure functions; any thread.
#include "engine/cpu/vec_math.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace kvgate::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// exp(y) for the y = (logit - max) / T <= 0 of a softmax, in scalar and AVX2
// forms that give bit-identical results (the same IEEE operations in the
// same order), so that the draw never depends on where a row's tail falls
// or on libm. y = n ln2 + r with |r| <= ln2/2 (ln2 split in two so n ln2 is
// exact), e^r by its Taylor series to r^6 (relative error ~1e-7, float's
// own), times 2^n built in the exponent bits. Below -87, and for NaN, the
// result is 0: such a token's probability is under 1e-37 of the best one's.
constexpr float kExpMin = -87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kC[] = {1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};

__m256 exp_nonpositive8(__m256 y) {
  const __m256 valid = _mm256_cmp_ps(y, _mm256_set1_ps(kExpMin), _CMP_GE_OQ);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(y, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), y);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kC[0]);
  for (size_t i = 1; i < std::size(kC); ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC[i]));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(valid, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
}

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

float exp_nonpositive(float y) {
  if (!(y >= kExpMin)) return 0.0f;
  const float n = std::nearbyint(y * kLog2e);
  float r = std::fma(-n, kLn2Hi, y);
  r = std::fma(-n, kLn2Lo, r);
  float p = kC[0];
  for (size_t i = 1; i < std::size(kC); ++i) p = std::fma(p, r, kC[i]);
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

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
