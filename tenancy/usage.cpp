// The prompt split is checked with overflow-checked adds: parts that wrap
// around to equal prompt_tokens must be rejected, not accepted.
#include "tenancy/usage.h"

#include <string>

#include "tenancy/checked_math.h"
#include "tenancy/error.h"

namespace kvgate::tenancy {

uint64_t TokenUsage::cached() const {
  return sat_add(sat_add(cached_device, cached_host), cached_disk);
}

void check_prompt_split(const TokenUsage& u) {
  uint64_t sum = 0;
  const bool fits = checked_add(u.cached_device, u.cached_host, &sum) &&
                    checked_add(sum, u.cached_disk, &sum) &&
                    checked_add(sum, u.fresh_prefill, &sum);
  if (!fits || sum != u.prompt_tokens) {
    throw Error(ErrorCode::kInvariantViolated,
                "prompt_tokens (" + std::to_string(u.prompt_tokens) +
                    ") != cached_device + cached_host + cached_disk + fresh_prefill (" +
                    std::to_string(u.cached_device) + " + " + std::to_string(u.cached_host) +
                    " + " + std::to_string(u.cached_disk) + " + " +
                    std::to_string(u.fresh_prefill) + (fits ? "" : ", overflows") + ")");
  }
  uint64_t pinned = 0;
  if (!checked_add(u.cache_write_5m, u.cache_write_1h, &pinned) || pinned > u.fresh_prefill) {
    throw Error(ErrorCode::kInvariantViolated,
                "cache_write_5m + cache_write_1h (" + std::to_string(u.cache_write_5m) + " + " +
                    std::to_string(u.cache_write_1h) + ") > fresh_prefill (" + std::to_string(u.fresh_prefill) + ")");
  }
}

}  // namespace kvgate::tenancy
