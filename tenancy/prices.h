// Price plans and the cost of one request.
//
// Prices are integers: micro-units of the billing currency per million
// tokens. The cost of a request is computed exactly, then rounded once:
//
//   cost_micros = round_half_up( (fresh  * fresh_input_per_mtok
//                                + pin_5m * cache_write_5m_per_mtok
//                                + pin_1h * cache_write_1h_per_mtok
//                                + cached * cached_input_per_mtok
//                                + written * cache_write_per_mtok
//                                + output * output_per_mtok) / 1'000'000 )
//
// where pin_5m, pin_1h = cache_write_5m, cache_write_1h (prompt tokens written
// into pinned blocks: Anthropic's cache writes), fresh = the rest of
// fresh_prefill, cached = device + host + disk hits (Anthropic's cache
// reads), written = cache_written (every token the request added to the
// cache, pinned or not: a premium on top, none by default). Each product is taken in 128 bits (64x64 never overflows);
// if the sum overflows 128 bits or the rounded cost exceeds UINT64_MAX
// micro-units, the cost is an error (kOverflow), never a wrapped number.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tenancy/usage.h"

namespace kvgate::tenancy {

struct PricePlan {
  std::string id;
  uint64_t fresh_input_per_mtok = 0;
  uint64_t cached_input_per_mtok = 0;  // default: 10% of fresh
  uint64_t cache_write_per_mtok = 0;   // premium per token written to cache, default none
  uint64_t output_per_mtok = 0;
  // A prompt token written under a pin, instead of the fresh price: Anthropic's
  // cache writes, by lifetime. Defaults 1.25x and 2x fresh, as Anthropic's.
  uint64_t cache_write_5m_per_mtok = 0;
  uint64_t cache_write_1h_per_mtok = 0;

  // A plan whose cached price is 10% of fresh and whose pinned writes are
  // 1.25x (5 minutes) and 2x (1 hour) fresh, each rounded half up.
  static PricePlan with_default_cached(std::string id, uint64_t fresh_input_per_mtok,
                                       uint64_t output_per_mtok,
                                       uint64_t cache_write_per_mtok = 0);
  bool operator==(const PricePlan&) const = default;
};

uint64_t default_cached_price(uint64_t fresh_input_per_mtok);
uint64_t default_write_5m_price(uint64_t fresh_input_per_mtok);
uint64_t default_write_1h_price(uint64_t fresh_input_per_mtok);

// nullopt when the cost does not fit (see the rule above). `u` must hold the
// split (check_prompt_split): pinned writes beyond fresh_prefill count as
// fresh ones.
std::optional<uint64_t> try_cost_micros(const PricePlan& plan, const TokenUsage& u);
// Throws Error(kOverflow) naming the plan when the cost does not fit.
uint64_t cost_micros(const PricePlan& plan, const TokenUsage& u);

std::string encode_plan(const PricePlan& p);
PricePlan decode_plan(std::string_view v);

}  // namespace kvgate::tenancy
