// WallClock: wall-clock time for quotas, key timestamps and month
// boundaries, named apart from the engine's SteadyClock (latencies), which
// never jumps. Injected everywhere so tests drive time by hand and never sleep.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kvgate::tenancy {

// Nanoseconds since the Unix epoch, UTC. Implementations must be thread-safe.
class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual int64_t now_ns() const = 0;
};

class SystemClock final : public WallClock {
 public:
  int64_t now_ns() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  static const SystemClock& instance() {
    static const SystemClock clock;
    return clock;
  }
};

// A clock that moves only when told to; safe to read from many threads.
class ManualClock final : public WallClock {
 public:
  explicit ManualClock(int64_t start_ns = 0) : ns_(start_ns) {}
  int64_t now_ns() const override { return ns_.load(std::memory_order_acquire); }
  void set_ns(int64_t ns) { ns_.store(ns, std::memory_order_release); }
  void advance_ns(int64_t delta) { ns_.fetch_add(delta, std::memory_order_acq_rel); }
  void advance_s(int64_t seconds) { advance_ns(seconds * 1'000'000'000); }

 private:
  std::atomic<int64_t> ns_;
};

}  // namespace kvgate::tenancy
