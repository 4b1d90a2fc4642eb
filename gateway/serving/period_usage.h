// A tenant's usage over a period, as /v1/usage (the tenant's own) and
// /admin/usage (any tenant's, for the operator and kvgatectl) answer it:
// the period read from the query string, the ledger's totals as JSON, and
// /v1/usage's pages of UTC-aligned buckets (?bucket_width=1h|1d).
#pragma once

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tenancy/ledger.h"

namespace kvgate::serving {

// [start, end) in Unix seconds, from ?start_time=&end_time=: by default
// the 30 days up to now. Throws openai::ApiError (400) naming a bad value.
struct UsagePeriod {
  int64_t start = 0, end = 0;
  int64_t start_ns() const { return start * 1'000'000'000; }
  int64_t end_ns() const { return end * 1'000'000'000; }
};
UsagePeriod usage_period(std::string_view target);

// What a tenant may ask for in one call: totals over at most this many
// days, or one page of buckets (at most 168 hours or 31 days, as OpenAI's
// usage API); a longer period is read page by page.
inline constexpr int64_t kMaxTotalsDays = 366;
// Throws openai::ApiError (400 naming start_time) for a longer period.
void check_totals_period(const UsagePeriod& p);

// One page of buckets: [page_start, period end) from the bucket that holds
// page_start, at most `limit` of them.
struct BucketPage {
  std::string width;  // "1h" or "1d"
  int64_t width_s = 0;
  size_t limit = 0;
  int64_t page_start = 0;  // Unix seconds: the period's start, or ?page=
};
// Read from ?bucket_width=&limit=&page=; nothing without bucket_width.
// Throws openai::ApiError (400) naming a bad value.
std::optional<BucketPage> bucket_page(std::string_view target, const UsagePeriod& p);

// The raw value of ?name= in `target` (no percent-decoding: the values
// here are ids and numbers), or nothing.
std::optional<std::string_view> query_value(std::string_view target, std::string_view name);

// The totals alone, and with the envelope (object, tenant, period).
boost::json::object usage_totals_json(const tenancy::UsageTotals& u);
boost::json::object usage_json(std::string_view tenant, const UsagePeriod& p, const tenancy::UsageTotals& u);
// {object: "page", tenant, start_time, end_time, bucket_width, data:
// [{object: "bucket", start_time, end_time, totals...}], has_more,
// next_page}: `buckets` as Ledger::usage_buckets gave them for the page.
boost::json::object usage_page_json(std::string_view tenant, const UsagePeriod& p, const BucketPage& page,
                                    const std::vector<tenancy::UsageBucket>& buckets);

}  // namespace kvgate::serving
