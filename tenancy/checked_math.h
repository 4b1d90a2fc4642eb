// Saturating unsigned arithmetic for counters that must never wrap: a wrapped
// usage total or quota level would bill or admit wildly wrong amounts.
#pragma once

#include <cstdint>
#include <limits>

namespace kvgate::tenancy {

// 128-bit intermediates for exact price and token-bucket arithmetic.
// __extension__ keeps -Wpedantic quiet about the GCC/Clang builtin type.
__extension__ typedef unsigned __int128 u128;

constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

constexpr uint64_t sat_add(uint64_t a, uint64_t b) noexcept {
  return a > kU64Max - b ? kU64Max : a + b;
}

constexpr uint64_t sat_sub(uint64_t a, uint64_t b) noexcept { return a < b ? 0 : a - b; }

// Overflow-checked add; false (and *out untouched) when a + b would wrap.
constexpr bool checked_add(uint64_t a, uint64_t b, uint64_t* out) noexcept {
  if (a > kU64Max - b) return false;
  *out = a + b;
  return true;
}

}  // namespace kvgate::tenancy
