// Histogram: observations counted into fixed buckets, Prometheus-style
// (bucket i counts values <= bounds[i]; one more bucket for +Inf), plus
// their count and sum. Lock-free: any thread may observe.
//
// A reader may see an observation in its bucket before it is in the sum
// (relaxed atomics, no snapshot lock); Prometheus tolerates that, and the
// counts are exact once writers are quiet.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace kvgate::metrics {

// Upper bounds, strictly increasing and finite; shared by a family's series.
using Buckets = std::shared_ptr<const std::vector<double>>;

class Histogram {
 public:
  explicit Histogram(Buckets bounds);

  void observe(double v) noexcept;

  const std::vector<double>& bounds() const { return *bounds_; }
  // Cumulative counts, one per bound and a last one for +Inf (== count()).
  std::vector<uint64_t> cumulative_counts() const;
  uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }

 private:
  Buckets bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bucket, not cumulative; bounds + 1
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

}  // namespace kvgate::metrics
