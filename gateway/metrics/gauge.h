// Gauge: a value that goes up and down (blocks in use, requests waiting).
// Lock-free: any thread may set it.
#pragma once

#include <atomic>

namespace kvgate::metrics {

class Gauge {
 public:
  void set(double v) noexcept { value_.store(v, std::memory_order_relaxed); }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

}  // namespace kvgate::metrics
