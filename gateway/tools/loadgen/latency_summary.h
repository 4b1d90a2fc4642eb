// LatencySummary: mean and percentiles of one latency metric over a run,
// counted as `vllm bench serve` counts them, so the two can be read side by
// side: percentiles by linear interpolation between the closest ranks
// (numpy.percentile's default), over every observation.
//
// Pure values; any thread.
#pragma once

#include <cstddef>
#include <vector>

namespace kvgate::loadgen {

// The p-th percentile (0..100) of sorted values; 0 for none.
double percentile(const std::vector<double>& sorted, double p);

struct LatencySummary {
  size_t count = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
};

// Sorts its argument.
LatencySummary summarize(std::vector<double> values);

}  // namespace kvgate::loadgen
