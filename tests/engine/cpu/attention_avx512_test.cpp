// The AVX-512 pieces of attend_rows (engine/cpu/attention_avx512.h) against
// their scalar definitions.
#include "engine/cpu/attention_avx512.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <vector>

#include "engine/cpu/cpu_features.h"
#include "engine/cpu/exp_nonpositive.h"

namespace kvgate {
namespace {

// Every length around the 16-lane vectors and a row as long as a context;
// score spreads of a few units (typical) up to 200 (terms below e^-87 are 0).
TEST(ExpShiftedAvx512, EachTermIsTheScalarExpBitForBit) {
  if (!cpu_has_avx512()) GTEST_SKIP() << "no AVX-512";
  std::mt19937 rng(11);
  std::vector<int32_t> lengths;
  for (int32_t n = 1; n <= 49; ++n) lengths.push_back(n);
  lengths.push_back(2047);
  for (const float spread : {4.0f, 30.0f, 200.0f})
    for (const int32_t n : lengths) {
      std::uniform_real_distribution<float> score(-spread, spread);
      constexpr float kPast = 3.5f;  // beyond the row: must stay as it is
      std::vector<float> s(static_cast<size_t>(n) + 16, kPast);
      for (int32_t p = 0; p < n; ++p) s[static_cast<size_t>(p)] = score(rng);
      const float mx = *std::max_element(s.begin(), s.begin() + n);
      std::vector<float> want(static_cast<size_t>(n));
      double sum = 0;
      for (int32_t p = 0; p < n; ++p)
        sum += want[static_cast<size_t>(p)] = cpu::exp_nonpositive1(s[static_cast<size_t>(p)] - mx);

      const float got_sum = exp_shifted_avx512(s.data(), n);
      for (int32_t p = 0; p < n; ++p)
        ASSERT_EQ(std::bit_cast<uint32_t>(s[static_cast<size_t>(p)]),
                  std::bit_cast<uint32_t>(want[static_cast<size_t>(p)]))
            << "n " << n << ", spread " << spread << ", term " << p;
      for (size_t p = static_cast<size_t>(n); p < s.size(); ++p)
        ASSERT_EQ(s[p], kPast) << "n " << n << ": wrote past the row";
      EXPECT_NEAR(got_sum, sum, 1e-6 * sum) << "n " << n << ", spread " << spread;
      EXPECT_GE(got_sum, 1.0f);  // the max's own term
    }
}

}  // namespace
}  // namespace kvgate
