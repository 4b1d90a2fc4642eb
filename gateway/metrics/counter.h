// Counter: a monotonic count in integer units (tokens, requests, blocks,
// micro-dollars), so that sums are exact and a total read back equals the
// sum of what was added, to the unit. Lock-free: any thread may add.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvgate::metrics {

class Counter {
 public:
  void add(uint64_t n = 1) noexcept { value_.fetch_add(n, std::memory_order_relaxed); }
  // For counters kept elsewhere (the engine's prefix-cache totals), copied in
  // at collection time; the source must itself be monotonic.
  void set_total(uint64_t total) noexcept { value_.store(total, std::memory_order_relaxed); }
  uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

}  // namespace kvgate::metrics
