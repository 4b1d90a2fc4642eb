// A token bucket of `capacity` tokens refilled evenly over one period, kept
// in exact integer arithmetic. Not thread-safe: the owner locks.
#pragma once

#include <cstdint>
#include <optional>

#include "tenancy/checked_math.h"

namespace kvgate::tenancy {

class TokenBucket {
 public:
  static constexpr int64_t kMinuteNs = 60'000'000'000;

  // Starts full at `now_ns`.
  TokenBucket(uint64_t capacity, int64_t now_ns, int64_t period_ns = kMinuteNs);

  // Changes the capacity (a tenant's limit was edited); the current level is
  // clamped to the new capacity.
  void set_capacity(uint64_t capacity, int64_t now_ns);
  uint64_t capacity() const { return capacity_; }

  uint64_t available(int64_t now_ns);
  bool try_take(uint64_t n, int64_t now_ns);
  // Takes n even if that leaves the bucket in debt (usage found to exceed its
  // estimate at settle time); refills pay the debt before anything else.
  void take_anyway(uint64_t n, int64_t now_ns);
  void give_back(uint64_t n, int64_t now_ns);  // refund, capped at capacity

  // Nanoseconds until n tokens are available; nullopt if n > capacity.
  std::optional<int64_t> ns_until(uint64_t n, int64_t now_ns);
  int64_t ns_until_full(int64_t now_ns);

 private:
  void refill(int64_t now_ns);
  u128 units(uint64_t tokens) const { return u128{tokens} * static_cast<uint64_t>(period_ns_); }
  int64_t ns_for(u128 deficit) const;

  // One token is period_ns_ units, so refilling adds exactly capacity_ units
  // per nanosecond: no division, no rounding drift.
  uint64_t capacity_;
  int64_t period_ns_;
  u128 level_;      // in [0, units(capacity_)]
  u128 debt_ = 0;   // nonzero only while level_ == 0
  int64_t last_ns_;
};

}  // namespace kvgate::tenancy
