// A record is validated before it is queued for commit, so an invalid record
// never reaches the group-commit leader and never fails anyone else's batch.
#include "tenancy/ledger_record.h"

#include "tenancy/codec.h"
#include "tenancy/error.h"
#include "tenancy/tenant.h"

namespace kvgate::tenancy {
namespace {
constexpr uint8_t kLedgerFormat = 1;
constexpr size_t kMaxIdBytes = 256;
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
  const bool ordered = r.arrival_ns <= r.finish_ns &&
                       (r.first_token_ns == 0 ||
                        (r.arrival_ns <= r.first_token_ns && r.first_token_ns <= r.finish_ns));
  if (!ordered) {
    throw Error(ErrorCode::kInvariantViolated,
                "ledger record " + r.request_id +
                    ": timestamps must satisfy arrival <= first_token <= finish (arrival " +
                    std::to_string(r.arrival_ns) + ", first_token " +
                    std::to_string(r.first_token_ns) + ", finish " + std::to_string(r.finish_ns) +
                    ")");
  }
}

std::string encode_ledger_record(const LedgerRecord& r) {
  return Encoder(kLedgerFormat)
      .bytes(r.request_id)
      .bytes(r.tenant_id)
      .bytes(r.key_id)
      .bytes(r.model)
      .i64(r.arrival_ns)
      .i64(r.first_token_ns)
      .i64(r.finish_ns)
      .u64(r.tokens.prompt_tokens)
      .u64(r.tokens.cached_device)
      .u64(r.tokens.cached_host)
      .u64(r.tokens.cached_disk)
      .u64(r.tokens.fresh_prefill)
      .u64(r.tokens.cache_written)
      .u64(r.tokens.output_tokens)
      .u8(static_cast<uint8_t>(r.finish_reason))
      .u64(r.cost_micros)
      .take();
}

LedgerRecord decode_ledger_record(std::string_view v) {
  Decoder d(v, kLedgerFormat, "ledger record");
  LedgerRecord r;
  r.request_id = d.bytes();
  r.tenant_id = d.bytes();
  r.key_id = d.bytes();
  r.model = d.bytes();
  r.arrival_ns = d.i64();
  r.first_token_ns = d.i64();
  r.finish_ns = d.i64();
  r.tokens.prompt_tokens = d.u64();
  r.tokens.cached_device = d.u64();
  r.tokens.cached_host = d.u64();
  r.tokens.cached_disk = d.u64();
  r.tokens.fresh_prefill = d.u64();
  r.tokens.cache_written = d.u64();
  r.tokens.output_tokens = d.u64();
  r.finish_reason = static_cast<FinishReason>(d.u8());
  r.cost_micros = d.u64();
  d.finish();
  return r;
}

std::string ledger_time_key_prefix(std::string_view tenant_id, int64_t finish_ns) {
  std::string k(tenant_id);
  k.push_back('\0');
  append_be64(&k, ordered_i64(finish_ns));
  return k;
}

std::string ledger_time_key(std::string_view tenant_id, int64_t finish_ns,
                            std::string_view request_id) {
  std::string k = ledger_time_key_prefix(tenant_id, finish_ns);
  k.append(request_id);
  return k;
}

}  // namespace kvgate::tenancy
