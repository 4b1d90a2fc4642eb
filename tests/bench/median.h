// The benchmarks report medians: on a shared machine a run's outliers are
// someone else's work, and the median ignores them where a mean would not.
#pragma once

#include <algorithm>
#include <vector>

namespace kvgate {

// The upper median of a non-empty sample.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace kvgate
