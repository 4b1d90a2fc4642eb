// A tenant's configured limits. Zero means "no limit" for every field except
// the cached-token weight, where zero means cached tokens are free for TPM.
#pragma once

#include <cstdint>

namespace kvgate::tenancy {

struct QuotaLimits {
  uint64_t requests_per_minute = 0;
  uint64_t tokens_per_minute = 0;
  uint64_t max_concurrent_requests = 0;
  uint64_t monthly_spend_cap_micros = 0;  // per UTC calendar month
  uint64_t max_cached_kv_blocks = 0;      // enforced by the cache through check_kv_blocks()
  // How much one cached prompt token counts against tokens_per_minute, in
  // thousandths (0 = free, 1000 = same as a fresh token). Cached tokens cost
  // the engine little, so by default they do not eat the tenant's budget.
  uint32_t cached_token_weight_permille = 0;
  // KV blocks the tenant may keep pinned (cache_control, prompt_cache_retention,
  // an operator's pin); 0 = the server's default, model.tenant_pinned_percent
  // of the device pool. Never past the server's cap on all pins.
  uint64_t max_pinned_kv_blocks = 0;

  bool operator==(const QuotaLimits&) const = default;
};

}  // namespace kvgate::tenancy
