// Usage to JSON. Pure; any thread.
#include "gateway/openai/usage_report.h"

#include <boost/json/object.hpp>

namespace kvgate::openai {
namespace json = boost::json;

namespace {

uint64_t count(int32_t n) { return n > 0 ? static_cast<uint64_t>(n) : 0; }

}  // namespace

UsageReport usage_from_result(const RequestResult& r) {
  UsageReport u;
  u.prompt_tokens = count(r.prompt_tokens);
  u.completion_tokens = r.output.size();
  u.cached_device_tokens = count(r.cached_tokens);
  u.fresh_prefill_tokens = count(r.fresh_prefill_tokens);
  u.cache_written_tokens = count(r.cache_written_tokens);
  return u;
}

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
  if (u.pin_asked) ext["cache_pin"] = json::object{{"pinned_tokens", u.pinned_tokens}, {"refused", u.pin_refused}};

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
