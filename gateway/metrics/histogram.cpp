#include "gateway/metrics/histogram.h"

#include <algorithm>
#include <cmath>

namespace kvgate::metrics {

Histogram::Histogram(Buckets bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<uint64_t>[bounds_->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double v) noexcept {
  if (std::isnan(v)) return;  // an undefined figure (TPOT of one token) is not an observation
  // The first bound >= v: "le" is inclusive.
  const size_t i = std::lower_bound(bounds_->begin(), bounds_->end(), v) - bounds_->begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::cumulative_counts() const {
  std::vector<uint64_t> out(bounds_->size() + 1);
  uint64_t run = 0;
  for (size_t i = 0; i < out.size(); ++i) out[i] = run += buckets_[i].load(std::memory_order_relaxed);
  return out;
}

}  // namespace kvgate::metrics
