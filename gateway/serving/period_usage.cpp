#include "gateway/serving/period_usage.h"

#include <boost/json/array.hpp>

#include <algorithm>
#include <charconv>
#include <limits>

#include "gateway/openai/api_error.h"
#include "tenancy/clock.h"

namespace kvgate::serving {
namespace {

std::optional<int64_t> query_seconds(std::string_view target, std::string_view name) {
  const std::optional<std::string_view> v = query_value(target, name);
  if (!v) return std::nullopt;
  int64_t out = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size())
    throw openai::invalid_value(name, "expected a whole number of seconds since the Unix epoch");
  return out;
}

}  // namespace

std::optional<std::string_view> query_value(std::string_view target, std::string_view name) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const std::string_view pair = rest.substr(0, rest.find('&'));
    rest = pair.size() < rest.size() ? rest.substr(pair.size() + 1) : std::string_view{};
    if (pair.starts_with(name) && pair.size() > name.size() && pair[name.size()] == '=')
      return pair.substr(name.size() + 1);
  }
  return std::nullopt;
}

UsagePeriod usage_period(std::string_view target) {
  UsagePeriod p;
  const int64_t now = tenancy::SystemClock::instance().now_ns() / 1'000'000'000;
  p.end = query_seconds(target, "end_time").value_or(now + 1);
  p.start = query_seconds(target, "start_time").value_or(p.end - 30 * 86400);
  if (p.start > p.end) throw openai::invalid_value("start_time", "must not be after end_time");
  // Nanoseconds must not overflow: the ledger keys are int64 ns.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 1'000'000'000;
  if (p.start < 0 || p.end > kMax) throw openai::invalid_value(p.start < 0 ? "start_time" : "end_time", "is out of range");
  return p;
}

void check_totals_period(const UsagePeriod& p) {
  if (p.end - p.start > kMaxTotalsDays * 86400)
    throw openai::invalid_value("start_time", "the period may span at most " + std::to_string(kMaxTotalsDays) +
                                                  " days; for a longer one, page through its buckets (bucket_width=1d)");
}

std::optional<BucketPage> bucket_page(std::string_view target, const UsagePeriod& p) {
  const std::optional<std::string_view> width = query_value(target, "bucket_width");
  if (!width) return std::nullopt;
  BucketPage page;
  size_t default_limit = 0, max_limit = 0;
  if (*width == "1h") {
    page.width_s = 3600, default_limit = 24, max_limit = 168;
  } else if (*width == "1d") {
    page.width_s = 86400, default_limit = 7, max_limit = 31;
  } else {
    throw openai::invalid_value("bucket_width", "expected 1h or 1d");
  }
  page.width = std::string(*width);
  page.limit = default_limit;
  if (const std::optional<std::string_view> v = query_value(target, "limit")) {
    size_t n = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size() || n < 1 || n > max_limit)
      throw openai::invalid_value("limit", "expected 1 to " + std::to_string(max_limit) + " buckets of " + page.width);
    page.limit = n;
  }
  page.page_start = query_seconds(target, "page").value_or(p.start);
  if (page.page_start < p.start || page.page_start >= std::max(p.end, p.start + 1))
    throw openai::invalid_value("page", "is not a page of this period (pass next_page as it came, with the same start_time and end_time)");
  return page;
}

boost::json::object usage_totals_json(const tenancy::UsageTotals& u) {
  return {{"requests", u.requests},
          {"prompt_tokens", u.tokens.prompt_tokens},
          {"cached_tokens", u.tokens.cached()},
          {"fresh_prefill_tokens", u.tokens.fresh_prefill},
          {"cache_written_tokens", u.tokens.cache_written},
          {"cache_write_5m_tokens", u.tokens.cache_write_5m},
          {"cache_write_1h_tokens", u.tokens.cache_write_1h},
          {"completion_tokens", u.tokens.output_tokens},
          {"cost_micros", u.cost_micros},
          {"currency", "USD"}};
}

boost::json::object usage_json(std::string_view tenant, const UsagePeriod& p, const tenancy::UsageTotals& u) {
  boost::json::object o{{"object", "usage"}, {"tenant", tenant}, {"start_time", p.start}, {"end_time", p.end}};
  for (auto& kv : usage_totals_json(u)) o.insert(kv);
  return o;
}

boost::json::object usage_page_json(std::string_view tenant, const UsagePeriod& p, const BucketPage& page,
                                    const std::vector<tenancy::UsageBucket>& buckets) {
  boost::json::array data;
  data.reserve(buckets.size());
  for (const tenancy::UsageBucket& b : buckets) {
    boost::json::object o{{"object", "bucket"}, {"start_time", b.start_ns / 1'000'000'000},
                          {"end_time", b.end_ns / 1'000'000'000}};
    for (auto& kv : usage_totals_json(b.totals)) o.insert(kv);
    data.push_back(std::move(o));
  }
  const int64_t reached = buckets.empty() ? p.end : buckets.back().end_ns / 1'000'000'000;
  const bool more = reached < p.end;
  return {{"object", "page"},       {"tenant", tenant},
          {"start_time", p.start},  {"end_time", p.end},
          {"bucket_width", page.width}, {"data", std::move(data)},
          {"has_more", more},       {"next_page", more ? boost::json::value(std::to_string(reached)) : nullptr}};
}

}  // namespace kvgate::serving
