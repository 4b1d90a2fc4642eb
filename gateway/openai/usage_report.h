// UsageReport: what one request used and cost, as its client is told in
// "usage" and as the ledger records it (DESIGN invariant 8: the same
// numbers, to the token). The serving pipeline fills it from the engine's
// RequestResult and the tenant's price plan; this module only writes it.
//
// Invariant (DESIGN 4): prompt_tokens = cached_tokens() + fresh_prefill_tokens.
// prompt_tokens counts the cached tokens too, as OpenAI's usage does.
//
// JSON, OpenAI's fields first, then kvgate's extension object:
//   {"prompt_tokens": P, "completion_tokens": C, "total_tokens": P + C,
//    "prompt_tokens_details": {"cached_tokens": device + host + disk},
//    "kvgate": {"cached_tokens_by_tier": {"device": D, "host": H, "disk": K},
//               "fresh_prefill_tokens": F, "cache_written_tokens": W,
//               "cost_micros": M, "currency": "USD",
//               "cache_pin": {"pinned_tokens": N, "refused": false,
//                             "written_tokens": {"5m": W5, "1h": W1}}}}
// cache_pin only when the request asked for a pin (prompt_cache_retention,
// cache_ttl, Anthropic's cache_control): how many prompt tokens are now
// pinned, or that the tenant's cache quota had no room for them, and how
// many of them this request wrote (billed at the plan's write prices
// instead of the fresh price, by the pin's lifetime; see tenancy/prices.h).
// cost_micros is the price in millionths of the currency, as tenancy/
// computes it. Clients that know only OpenAI's fields ignore "kvgate".
//
// Pure values; any thread.
#pragma once

#include <cstdint>
#include <string>

#include <boost/json/value.hpp>


namespace kvgate::openai {

struct UsageReport {
  uint64_t prompt_tokens = 0;
  uint64_t completion_tokens = 0;
  uint64_t cached_device_tokens = 0;
  uint64_t cached_host_tokens = 0;
  uint64_t cached_disk_tokens = 0;
  uint64_t fresh_prefill_tokens = 0;
  uint64_t cache_written_tokens = 0;
  uint64_t cache_write_5m_tokens = 0;  // part of fresh_prefill_tokens
  uint64_t cache_write_1h_tokens = 0;  // part of fresh_prefill_tokens
  uint64_t cost_micros = 0;
  std::string currency = "USD";
  bool pin_asked = false;
  uint64_t pinned_tokens = 0;
  bool pin_refused = false;

  uint64_t cached_tokens() const { return cached_device_tokens + cached_host_tokens + cached_disk_tokens; }
  uint64_t pin_written_tokens() const { return cache_write_5m_tokens + cache_write_1h_tokens; }
  uint64_t total_tokens() const { return prompt_tokens + completion_tokens; }
  // Invariant 4: prompt = cached + fresh.
  bool balanced() const { return prompt_tokens == cached_tokens() + fresh_prefill_tokens; }
  bool operator==(const UsageReport&) const = default;
};

boost::json::value to_json(const UsageReport& u);

}  // namespace kvgate::openai
