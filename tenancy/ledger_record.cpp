// A record is validated before it is queued for commit, so an invalid record
// never reaches the group-commit leader and never fails anyone else's batch.
#include "tenancy/ledger_record.h"

#include <ostream>

#include "tenancy/codec.h"
#include "tenancy/error.h"
#include "tenancy/tenant.h"

namespace kvgate::tenancy {
namespace {

constexpr size_t kMaxIdBytes = 256;

// A ledger record's one field list, in on-disk order (codec.h). The finish
// reason is checked by validate() before a record is written, not on read.
// Format 2 added the pinned writes; a format-1 record (written before) reads
// back with none, which is what it billed.
template <uint8_t Format>
struct LedgerFields {
  using Record = LedgerRecord;
  static constexpr uint8_t kFormat = Format;
  static constexpr const char* kWhat = "ledger record";
  template <class R, class Field>
  static void visit(R& r, Field& f) {
    f(r.request_id);
    f(r.tenant_id);
    f(r.key_id);
    f(r.model);
    f(r.arrival_ns);
    f(r.first_token_ns);
    f(r.finish_ns);
    f(r.tokens.prompt_tokens);
    f(r.tokens.cached_device);
    f(r.tokens.cached_host);
    f(r.tokens.cached_disk);
    f(r.tokens.fresh_prefill);
    f(r.tokens.cache_written);
    f(r.tokens.output_tokens);
    f(r.finish_reason);
    f(r.cost_micros);
    if constexpr (Format >= 2) {
      f(r.tokens.cache_write_5m);
      f(r.tokens.cache_write_1h);
    }
  }
};
using CurrentLedgerFields = LedgerFields<2>;

}  // namespace

const char* finish_reason_name(FinishReason r) noexcept {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "?";
}

void validate(const LedgerRecord& r) {
  if (r.request_id.empty() || r.request_id.size() > kMaxIdBytes) {
    throw Error(ErrorCode::kInvalidArgument, "ledger record: request id must be 1-256 bytes");
  }
  check_id(r.tenant_id, "ledger record tenant id");
  const auto reason = static_cast<uint8_t>(r.finish_reason);
  if (reason < 1 || reason > 4) {
    throw Error(ErrorCode::kInvalidArgument,
                "ledger record " + r.request_id + ": unknown finish reason");
  }
  try {
    check_prompt_split(r.tokens);
  } catch (const Error& e) {
    throw Error(ErrorCode::kInvariantViolated, "ledger record " + r.request_id + ": " + e.what());
  }
  const bool ordered = 0 <= r.arrival_ns && r.arrival_ns <= r.finish_ns &&
                       (r.first_token_ns == 0 ||
                        (r.arrival_ns <= r.first_token_ns && r.first_token_ns <= r.finish_ns));
  if (!ordered) {
    throw Error(ErrorCode::kInvariantViolated,
                "ledger record " + r.request_id +
                    ": timestamps must satisfy 0 <= arrival <= first_token <= finish (arrival " +
                    std::to_string(r.arrival_ns) + ", first_token " +
                    std::to_string(r.first_token_ns) + ", finish " + std::to_string(r.finish_ns) +
                    ")");
  }
}

std::string encode_ledger_record(const LedgerRecord& r) { return encode_record<CurrentLedgerFields>(r); }

LedgerRecord decode_ledger_record(std::string_view v) {
  if (record_format(v) == 1) return decode_record<LedgerFields<1>>(v);
  return decode_record<CurrentLedgerFields>(v);
}

std::string ledger_time_key_prefix(std::string_view tenant_id, int64_t finish_ns) {
  std::string k(tenant_id);
  k.push_back('\0');
  append_be64(&k, ordered_i64(finish_ns));
  return k;
}

int64_t ledger_key_time(std::string_view key, std::string_view tenant_id) {
  if (key.size() < tenant_id.size() + 9) throw Error(ErrorCode::kCorrupt, "ledger key too short");
  return unordered_i64(read_be64(key.substr(tenant_id.size() + 1, 8)));
}

std::string ledger_time_key(std::string_view tenant_id, int64_t finish_ns,
                            std::string_view request_id) {
  std::string k = ledger_time_key_prefix(tenant_id, finish_ns);
  k.append(request_id);
  return k;
}

namespace {

// RFC 4180: quote a field that holds a separator, quote or line break.
void csv_field(std::ostream& out, std::string_view v) {
  if (v.find_first_of(",\"\r\n") == std::string_view::npos) {
    out << v;
    return;
  }
  out << '"';
  for (char c : v) {
    if (c == '"') out << '"';
    out << c;
  }
  out << '"';
}

}  // namespace

void write_csv_header(std::ostream& out) {
  out << "request_id,tenant_id,key_id,model,arrival_ns,first_token_ns,finish_ns,"
         "prompt_tokens,cached_device,cached_host,cached_disk,fresh_prefill,cache_written,cache_write_5m,cache_write_1h,"
         "output_tokens,finish_reason,cost_micros\n";
}

void write_csv_row(std::ostream& out, const LedgerRecord& r) {
  csv_field(out, r.request_id);
  out << ',';
  csv_field(out, r.tenant_id);
  out << ',';
  csv_field(out, r.key_id);
  out << ',';
  csv_field(out, r.model);
  out << ',' << r.arrival_ns << ',' << r.first_token_ns << ',' << r.finish_ns << ',' << r.tokens.prompt_tokens << ','
      << r.tokens.cached_device << ',' << r.tokens.cached_host << ',' << r.tokens.cached_disk << ','
      << r.tokens.fresh_prefill << ',' << r.tokens.cache_written << ',' << r.tokens.cache_write_5m << ','
      << r.tokens.cache_write_1h << ',' << r.tokens.output_tokens << ',' << finish_reason_name(r.finish_reason) << ','
      << r.cost_micros << "\n";
}

}  // namespace kvgate::tenancy
