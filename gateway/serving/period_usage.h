// A tenant's usage over a period, as /v1/usage (the tenant's own) and
// /admin/usage (any tenant's, for the operator and kvgatectl) answer it:
// the period read from the query string, the ledger's totals as JSON.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

// The raw value of ?name= in `target` (no percent-decoding: the values
// here are ids and numbers), or nothing.
std::optional<std::string_view> query_value(std::string_view target, std::string_view name);

// The totals alone, and with the envelope (object, tenant, period).
boost::json::object usage_totals_json(const tenancy::UsageTotals& u);
boost::json::object usage_json(std::string_view tenant, const UsagePeriod& p, const tenancy::UsageTotals& u);

}  // namespace kvgate::serving
