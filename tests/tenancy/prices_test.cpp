// Price arithmetic: exact integer math, one round-half-up, no silent overflow.
#include "tenancy/prices.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "tenancy/error.h"

namespace kvgate::tenancy {
namespace {

TokenUsage usage(uint64_t fresh, uint64_t cached, uint64_t written, uint64_t output) {
  TokenUsage u;
  u.fresh_prefill = fresh;
  u.cached_device = cached;
  u.prompt_tokens = fresh + cached;
  u.cache_written = written;
  u.output_tokens = output;
  return u;
}

// $3 / M fresh input, $15 / M output, in micro-dollars per million tokens.
const PricePlan kPlan = PricePlan::with_default_cached("std", 3'000'000, 15'000'000, 750'000);

TEST(Prices, CachedDefaultsToTenPercentOfFresh) {
  EXPECT_EQ(kPlan.cached_input_per_mtok, 300'000u);
  EXPECT_EQ(default_cached_price(0), 0u);
  EXPECT_EQ(default_cached_price(4), 0u);   // 0.4 rounds down
  EXPECT_EQ(default_cached_price(5), 1u);   // 0.5 rounds half up
  EXPECT_EQ(default_cached_price(UINT64_MAX), UINT64_MAX / 10 + 1);  // ...5.5 -> up, no overflow
}

TEST(Prices, ZeroTokensCostNothing) {
  EXPECT_EQ(cost_micros(kPlan, TokenUsage{}), 0u);
  const PricePlan max{"max", UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
  EXPECT_EQ(cost_micros(max, TokenUsage{}), 0u);
}

TEST(Prices, FormulaCombinesAllFourTerms) {
  // 1M fresh = 3'000'000, 1M cached = 300'000, 1M written = 750'000,
  // 1M output = 15'000'000 micro-units.
  EXPECT_EQ(cost_micros(kPlan, usage(1'000'000, 1'000'000, 1'000'000, 1'000'000)), 19'050'000u);
  // 1000 fresh + 2000 cached + 0 written + 500 output:
  // (3e9 + 6e8 + 7.5e9) / 1e6 = 11100 exactly.
  EXPECT_EQ(cost_micros(kPlan, usage(1000, 2000, 0, 500)), 11'100u);
}

TEST(Prices, CachedTiersArePricedAlike) {
  TokenUsage u;
  u.cached_device = 1'000'000;
  u.cached_host = 2'000'000;
  u.cached_disk = 3'000'000;
  u.prompt_tokens = 6'000'000;
  EXPECT_EQ(cost_micros(kPlan, u), 6u * 300'000u);
}

TEST(Prices, RoundsHalfUpOnceOnTheTotal) {
  const PricePlan one{"one", 1, 1, 1, 1};  // 1 micro-unit per million tokens
  EXPECT_EQ(cost_micros(one, usage(499'999, 0, 0, 0)), 0u);
  EXPECT_EQ(cost_micros(one, usage(500'000, 0, 0, 0)), 1u);  // exactly half: up
  EXPECT_EQ(cost_micros(one, usage(1'499'999, 0, 0, 0)), 1u);
  EXPECT_EQ(cost_micros(one, usage(1'500'000, 0, 0, 0)), 2u);
  // Rounding once: four terms of 0.4 each sum to 1.6 -> 2 (per-term rounding
  // would give 0).
  EXPECT_EQ(cost_micros(one, usage(400'000, 400'000, 400'000, 400'000)), 2u);
}

TEST(Prices, HugeCountsAreExact) {
  const uint64_t half = UINT64_MAX / 2;  // 2^63 - 1 tokens
  // At 1'000'000 micro-units per million (1 per token), cost = tokens.
  const PricePlan unit{"unit", 1'000'000, 1'000'000, 1'000'000, 1'000'000};
  EXPECT_EQ(cost_micros(unit, usage(half, 0, 0, 0)), half);
  // Two halves still fit in 64 bits (2^64 - 2).
  EXPECT_EQ(cost_micros(unit, usage(half, 0, 0, half)), 2 * half);
  // At 1 micro-unit per million the exact cost is (2^63-1)/1e6 rounded.
  const PricePlan tiny{"tiny", 1, 1, 1, 1};
  EXPECT_EQ(cost_micros(tiny, usage(half, 0, 0, 0)), (half + 500'000) / 1'000'000);
  // Every count and every price at the maximum: the 128-bit sum itself
  // overflows, which must be caught, not wrapped.
  TokenUsage all;
  all.fresh_prefill = all.cached_device = all.cached_host = all.cached_disk = UINT64_MAX;
  all.cache_written = all.output_tokens = UINT64_MAX;
  const PricePlan max{"max", UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
  EXPECT_FALSE(try_cost_micros(max, all).has_value());
}

TEST(Prices, CostBeyondSixtyFourBitsIsAnErrorNotAWrap) {
  const uint64_t half = UINT64_MAX / 2;
  // $15/M output on 2^63 tokens is ~1.4e20 micro-units: more than 2^64.
  EXPECT_FALSE(try_cost_micros(kPlan, usage(0, 0, 0, half)).has_value());
  try {
    cost_micros(kPlan, usage(0, 0, 0, half));
    FAIL() << "expected an overflow error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOverflow);
    EXPECT_NE(std::string(e.what()).find("'std'"), std::string::npos) << e.what();
  }
  // Largest representable cost is fine.
  const PricePlan unit{"unit", 1'000'000, 1'000'000, 1'000'000, 1'000'000};
  EXPECT_EQ(cost_micros(unit, usage(0, 0, 0, UINT64_MAX)), UINT64_MAX);
}

TEST(Prices, PlanRoundTripsThroughItsEncoding) {
  EXPECT_EQ(decode_plan(encode_plan(kPlan)), kPlan);
}

}  // namespace
}  // namespace kvgate::tenancy
