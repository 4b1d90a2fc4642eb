// Usage to JSON. Pure; any thread.
#include "gateway/openai/usage_report.h"

#include <boost/json/object.hpp>

namespace kvgate::openai {
namespace json = boost::json;

json::value to_json(const UsageReport& u) {
  json::object by_tier;
  by_tier["device"] = u.cached_device_tokens;
  by_tier["host"] = u.cached_host_tokens;
  by_tier["disk"] = u.cached_disk_tokens;

  json::object ext;
  ext["cached_tokens_by_tier"] = std::move(by_tier);
  ext["fresh_prefill_tokens"] = u.fresh_prefill_tokens;
  ext["cache_written_tokens"] = u.cache_written_tokens;
  ext["cost_micros"] = u.cost_micros;
  ext["currency"] = u.currency;
  if (u.pin_asked)
    ext["cache_pin"] = json::object{
        {"pinned_tokens", u.pinned_tokens},
        {"refused", u.pin_refused},
        {"written_tokens", json::object{{"5m", u.cache_write_5m_tokens}, {"1h", u.cache_write_1h_tokens}}}};

  json::object details;
  details["cached_tokens"] = u.cached_tokens();

  json::object o;
  o["prompt_tokens"] = u.prompt_tokens;
  o["completion_tokens"] = u.completion_tokens;
  o["total_tokens"] = u.total_tokens();
  o["prompt_tokens_details"] = std::move(details);
  o["kvgate"] = std::move(ext);
  return o;
}

}  // namespace kvgate::openai
