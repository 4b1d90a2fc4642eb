// Percentiles as numpy.percentile computes them (linear interpolation), so
// the figures read the same as vllm bench serve's.
#include <gtest/gtest.h>

#include "gateway/tools/loadgen/latency_summary.h"

namespace kvgate::loadgen {
namespace {

TEST(LatencySummary, PercentilesInterpolateBetweenRanks) {
  const std::vector<double> v = {1, 2, 3, 4};
  // numpy.percentile([1, 2, 3, 4], [0, 50, 90, 99, 100]) = 1, 2.5, 3.7, 3.97, 4
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_NEAR(percentile(v, 90), 3.7, 1e-12);
  EXPECT_NEAR(percentile(v, 99), 3.97, 1e-12);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
}

TEST(LatencySummary, SummarizeSortsAndAverages) {
  const LatencySummary s = summarize({10, 0, 5, 20, 15});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 10);
  EXPECT_DOUBLE_EQ(s.p50, 10);
  EXPECT_NEAR(s.p90, 18, 1e-12);   // rank 3.6: 15 + 0.6 * 5
  EXPECT_NEAR(s.p99, 19.8, 1e-12);  // rank 3.96
  EXPECT_DOUBLE_EQ(s.max, 20);
}

TEST(LatencySummary, OneAndNoValues) {
  const LatencySummary one = summarize({7});
  EXPECT_DOUBLE_EQ(one.p50, 7);
  EXPECT_DOUBLE_EQ(one.p99, 7);
  const LatencySummary none = summarize({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_DOUBLE_EQ(none.p99, 0);
}

}  // namespace
}  // namespace kvgate::loadgen
