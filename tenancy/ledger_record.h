// One billing ledger record: what one finished request used and cost.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "tenancy/usage.h"

namespace kvgate::tenancy {

enum class FinishReason : uint8_t { kStop = 1, kLength = 2, kCancelled = 3, kError = 4 };
const char* finish_reason_name(FinishReason r) noexcept;  // "stop", "length", ...

struct LedgerRecord {
  std::string request_id;  // unique per request; the idempotence key
  std::string tenant_id;
  std::string key_id;
  std::string model;
  // Nanoseconds since the Unix epoch (UTC). first_token_ns is 0 when the
  // request ended before producing a token.
  int64_t arrival_ns = 0;
  int64_t first_token_ns = 0;
  int64_t finish_ns = 0;
  TokenUsage tokens;
  FinishReason finish_reason = FinishReason::kStop;
  uint64_t cost_micros = 0;

  bool operator==(const LedgerRecord&) const = default;
};

// Throws Error(kInvariantViolated) when the prompt split does not add up or
// the timestamps are out of order, Error(kInvalidArgument) for bad ids.
void validate(const LedgerRecord& r);

// The CSV of the usage export (RFC 4180): its header row, and one record's row.
void write_csv_header(std::ostream& out);
void write_csv_row(std::ostream& out, const LedgerRecord& r);

std::string encode_ledger_record(const LedgerRecord& r);
LedgerRecord decode_ledger_record(std::string_view v);

// Key in Family::kLedgerByTime: tenant id, \0, be64(finish time), request id.
// Sorting by tenant then finish time makes per-tenant range reports a scan.
std::string ledger_time_key(std::string_view tenant_id, int64_t finish_ns,
                            std::string_view request_id);
std::string ledger_time_key_prefix(std::string_view tenant_id, int64_t finish_ns);
// The time in a key made by either of the above for `tenant_id`.
int64_t ledger_key_time(std::string_view key, std::string_view tenant_id);

}  // namespace kvgate::tenancy
