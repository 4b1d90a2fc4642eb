// The token counts of one finished request, as the engine reports them.
// Invariant (DESIGN.md #4): prompt_tokens = cached_device + cached_host +
// cached_disk + fresh_prefill. cache_written counts prompt/output tokens whose
// KV blocks were newly committed to the cache; it is not part of the split.
// cache_write_5m and cache_write_1h are the part of fresh_prefill the request
// wrote into blocks it pinned (Anthropic's cache_control breakpoints, OpenAI's
// prompt_cache_retention, an operator's pin), by the pin's lifetime: a pin of
// up to 5 minutes is a 5-minute write, a longer one a 1-hour write. They are
// priced at the plan's write prices instead of the fresh price (prices.h).
#pragma once

#include <cstdint>

namespace kvgate::tenancy {

struct TokenUsage {
  uint64_t prompt_tokens = 0;
  uint64_t cached_device = 0;
  uint64_t cached_host = 0;
  uint64_t cached_disk = 0;
  uint64_t fresh_prefill = 0;
  uint64_t cache_written = 0;
  uint64_t output_tokens = 0;
  uint64_t cache_write_5m = 0;
  uint64_t cache_write_1h = 0;

  // Saturates; only meaningful once the invariant holds.
  uint64_t cached() const;
  bool operator==(const TokenUsage&) const = default;
};

// Throws Error(kInvariantViolated) naming every count when the split does not
// add up (overflowing sums included), or when the pinned writes are more
// than the fresh prefill they are part of.
void check_prompt_split(const TokenUsage& u);

}  // namespace kvgate::tenancy
