// The row-wise operations of the CPU forward pass against float64.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/cpu/rowwise.h"

namespace kvgate {
namespace {

// silu(g) * up over values from -100 to 100 (where exp(-g) overflows a
// float, and where the sigmoid underflows), zeros of both signs, and every
// tail length of the eight-wide loop; each value's result is the same
// wherever it falls in the row.
TEST(Rowwise, SwigluMatchesFloat64) {
  std::vector<float> g, up;
  for (float v = -100.0f; v <= 100.0f; v += 0.37f) g.push_back(v);
  for (float v : {0.0f, -0.0f, 88.5f, -88.5f, 1e-30f, -1e-30f}) g.push_back(v);
  for (size_t i = 0; i < g.size(); ++i) up.push_back(0.5f + static_cast<float>(i % 7));
  std::vector<float> whole = g;
  swiglu(whole.data(), up.data(), static_cast<int64_t>(whole.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = g[i], ref = x / (1.0 + std::exp(-x)) * up[i];
    // Below g = -87 the sigmoid is flushed to zero (exp_nonpositive.h):
    // results of |g e^g up| < 1e-34 may be zero.
    EXPECT_NEAR(whole[i], ref, 4e-7 * std::abs(ref) + 1e-34) << "g=" << g[i];
  }
  for (int64_t n = 1; n <= 17; ++n)
    for (int64_t from : {int64_t{0}, int64_t{3}, int64_t{300}}) {
      std::vector<float> part(g.begin() + from, g.begin() + from + n);
      swiglu(part.data(), up.data() + from, n);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(part[i], whole[from + i]) << "n=" << n << " from=" << from << " i=" << i;
    }
}

// gelu(g) * up (tanh form) against float64 over -20..20, where tanh
// saturates both ways, near 0, where tanh_exp.h's 1 - e cancels, and at
// every tail length: the same bits wherever a value falls in the row.
TEST(Rowwise, GegluMatchesFloat64) {
  std::vector<float> g, up;
  for (float v = -20.0f; v <= 20.0f; v += 0.013f) g.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-4f, -1e-4f, 1e-30f, -1e-30f, 3.0e-3f}) g.push_back(v);
  for (size_t i = 0; i < g.size(); ++i) up.push_back(0.5f + static_cast<float>(i % 7));
  std::vector<float> whole = g;
  geglu(whole.data(), up.data(), static_cast<int64_t>(whole.size()));
  for (size_t i = 0; i < g.size(); ++i) {
    const double x = g[i];
    const double ref = 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))) * up[i];
    // Absolute: tanh's error is absolute near 0 (where GELU is near 0).
    EXPECT_NEAR(whole[i], ref, 1e-6 * (std::abs(ref) + std::abs(x) * up[i]) + 1e-7) << "g=" << g[i];
  }
  for (int64_t n = 1; n <= 17; ++n)
    for (int64_t from : {int64_t{0}, int64_t{5}, int64_t{2000}}) {
      std::vector<float> part(g.begin() + from, g.begin() + from + n);
      geglu(part.data(), up.data() + from, n);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(part[i], whole[from + i]) << "n=" << n << " from=" << from << " i=" << i;
    }
}

}  // namespace
}  // namespace kvgate
