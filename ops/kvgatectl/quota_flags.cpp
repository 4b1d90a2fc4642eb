#include "ops/kvgatectl/quota_flags.h"

#include <boost/json.hpp>

namespace kvgatectl {

const std::vector<QuotaFlag>& quota_flags() {
  static const std::vector<QuotaFlag> kFlags = {
      {"requests_per_minute", "--requests-per-minute", "requests a minute (token bucket); 0 = unlimited"},
      {"tokens_per_minute", "--tokens-per-minute", "prompt + output tokens a minute; 0 = unlimited"},
      {"max_concurrent_requests", "--max-concurrent-requests", "requests at once; 0 = unlimited"},
      {"monthly_spend_cap_micros", "--monthly-spend-cap-micros",
       "spend per UTC calendar month, in micro-dollars; 0 = unlimited"},
      {"max_cached_kv_blocks", "--max-cached-kv-blocks", "KV blocks the tenant may keep cached; 0 = unlimited"},
      {"cached_token_weight_permille", "--cached-token-weight-permille",
       "how much a cached prompt token counts against tokens-per-minute, in 1/1000 (0..1000)"},
      {"max_pinned_kv_blocks", "--max-pinned-kv-blocks",
       "KV blocks the tenant may keep pinned; 0 = the server's default (model.tenant_pinned_percent of the pool)"},
  };
  return kFlags;
}

void QuotaValues::add_to(CLI::App& cmd) {
  const auto& flags = quota_flags();
  for (size_t i = 0; i < flags.size(); ++i) {
    cmd.add_option_function<int64_t>(
           flags[i].flag, [this, i](const int64_t& v) { values_[i] = v; }, flags[i].help)
        ->type_name("N")
        ->group("Quotas");
  }
}

bool QuotaValues::any() const {
  for (const auto& v : values_)
    if (v) return true;
  return false;
}

boost::json::object QuotaValues::json() const {
  boost::json::object o;
  const auto& flags = quota_flags();
  for (size_t i = 0; i < flags.size(); ++i)
    if (values_[i]) o[flags[i].key] = *values_[i];
  return o;
}

}  // namespace kvgatectl
