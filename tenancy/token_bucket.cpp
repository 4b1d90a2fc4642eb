// Invariant: debt_ > 0 implies level_ == 0, and level_ <= units(capacity_).
// All quantities are unsigned 128-bit: units(2^64-1 tokens) < 2^126 and an
// elapsed time times a capacity is a 64x64-bit product; the few sums that
// could still exceed 2^128 saturate. Time going backwards counts as no time.
#include "tenancy/token_bucket.h"

#include <algorithm>

namespace kvgate::tenancy {
namespace {

constexpr u128 kU128Max = ~u128{0};
// Capping the period at 2^62 ns keeps units(capacity) < 2^126, so a level
// plus any refill (< 2^127) cannot wrap.
constexpr int64_t kMaxPeriodNs = int64_t{1} << 62;

u128 sat_add128(u128 a, u128 b) { return a > kU128Max - b ? kU128Max : a + b; }

}  // namespace

TokenBucket::TokenBucket(uint64_t capacity, int64_t now_ns, int64_t period_ns)
    : capacity_(capacity),
      period_ns_(std::clamp<int64_t>(period_ns, 1, kMaxPeriodNs)),
      level_(units(capacity)),
      last_ns_(now_ns) {}

void TokenBucket::refill(int64_t now_ns) {
  if (now_ns <= last_ns_) return;
  const uint64_t elapsed = static_cast<uint64_t>(now_ns) - static_cast<uint64_t>(last_ns_);
  u128 gained = u128{elapsed} * capacity_;  // 64x64 bits: fits
  last_ns_ = now_ns;
  const u128 paid = std::min(gained, debt_);
  debt_ -= paid;
  gained -= paid;
  level_ = std::min(sat_add128(level_, gained), units(capacity_));
}

void TokenBucket::set_capacity(uint64_t capacity, int64_t now_ns) {
  refill(now_ns);
  capacity_ = capacity;
  level_ = std::min(level_, units(capacity_));
}

uint64_t TokenBucket::available(int64_t now_ns) {
  refill(now_ns);
  return static_cast<uint64_t>(level_ / static_cast<uint64_t>(period_ns_));
}

bool TokenBucket::try_take(uint64_t n, int64_t now_ns) {
  refill(now_ns);
  if (debt_ > 0 || level_ < units(n)) return false;
  level_ -= units(n);
  return true;
}

void TokenBucket::take_anyway(uint64_t n, int64_t now_ns) {
  refill(now_ns);
  const u128 want = units(n);
  if (level_ >= want) {
    level_ -= want;
    return;
  }
  const u128 owed = want - level_;
  level_ = 0;
  debt_ = sat_add128(debt_, owed);  // a debt this large never clears anyway
}

void TokenBucket::give_back(uint64_t n, int64_t now_ns) {
  refill(now_ns);
  u128 refund = units(n);
  const u128 paid = std::min(refund, debt_);
  debt_ -= paid;
  refund -= paid;
  level_ = std::min(level_ + refund, units(capacity_));
}

int64_t TokenBucket::ns_for(u128 deficit) const {
  if (deficit == 0) return 0;
  if (capacity_ == 0) return INT64_MAX;
  const u128 ns = (deficit + capacity_ - 1) / capacity_;
  return ns > u128{INT64_MAX} ? INT64_MAX : static_cast<int64_t>(ns);
}

std::optional<int64_t> TokenBucket::ns_until(uint64_t n, int64_t now_ns) {
  refill(now_ns);
  if (n > capacity_) return std::nullopt;
  const u128 want = units(n);
  if (debt_ == 0 && level_ >= want) return 0;
  return ns_for(sat_add128(debt_, want - level_));  // level_ < want here, or level_ == 0
}

int64_t TokenBucket::ns_until_full(int64_t now_ns) {
  refill(now_ns);
  return ns_for(sat_add128(debt_, units(capacity_) - level_));
}

}  // namespace kvgate::tenancy
