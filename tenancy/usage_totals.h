// Usage summed over many ledger records: what /v1/usage, the spend cap and
// the per-hour rollups (ledger.h) hold. Sums saturate, like the records'.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tenancy/ledger_record.h"

namespace kvgate::tenancy {

struct UsageTotals {
  uint64_t requests = 0;
  TokenUsage tokens;  // field-wise sums
  uint64_t cost_micros = 0;
  bool operator==(const UsageTotals&) const = default;
};

void add_to_totals(UsageTotals* t, const LedgerRecord& r);
void add_totals(UsageTotals* t, const UsageTotals& more);

// A rollup's stored value (codec.h); decoding throws Error(kCorrupt).
std::string encode_usage_totals(const UsageTotals& t);
UsageTotals decode_usage_totals(std::string_view v);

}  // namespace kvgate::tenancy
