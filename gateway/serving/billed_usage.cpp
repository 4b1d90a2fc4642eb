// Pure mappings from the engine's result to tenancy's records; any thread.
#include "gateway/serving/billed_usage.h"

#include <algorithm>

namespace kvgate::serving {
namespace {

uint64_t u64(int32_t v) { return static_cast<uint64_t>(std::max<int32_t>(v, 0)); }

}  // namespace

tenancy::TokenUsage token_usage(const RequestResult& r) {
  tenancy::TokenUsage u;
  u.prompt_tokens = u64(r.prompt_tokens);
  u.cached_device = u64(r.cached_device_tokens);
  u.cached_host = u64(r.cached_host_tokens);
  u.cached_disk = u64(r.cached_disk_tokens);
  u.fresh_prefill = u64(r.fresh_prefill_tokens);
  u.cache_written = u64(r.cache_written_tokens);
  u.output_tokens = r.output.size();
  return u;
}

tenancy::FinishReason ledger_finish_reason(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return tenancy::FinishReason::kStop;
    case FinishReason::kLength: return tenancy::FinishReason::kLength;
    case FinishReason::kCancelled: return tenancy::FinishReason::kCancelled;
    case FinishReason::kError: return tenancy::FinishReason::kError;
  }
  return tenancy::FinishReason::kError;
}

bool consumed_work(const RequestTiming& t) { return t.admitted_step >= 0; }

WallAnchor WallAnchor::now() {
  WallAnchor a;
  a.steady = SteadyClock::now();
  a.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  return a;
}

tenancy::LedgerRecord ledger_record(const RecordIds& ids, const RequestResult& r, const RequestTiming& t,
                                    const WallAnchor& clock) {
  tenancy::LedgerRecord rec;
  rec.request_id = ids.request_id;
  rec.tenant_id = ids.tenant_id;
  rec.key_id = ids.key_id;
  rec.model = ids.model;
  rec.arrival_ns = clock.to_wall_ns(t.arrival);
  rec.first_token_ns = t.token_times.empty() ? 0 : clock.to_wall_ns(t.first_token);
  rec.finish_ns = std::max(clock.to_wall_ns(t.finished), rec.arrival_ns);
  if (rec.first_token_ns != 0) rec.first_token_ns = std::clamp(rec.first_token_ns, rec.arrival_ns, rec.finish_ns);
  rec.tokens = token_usage(r);
  rec.finish_reason = ledger_finish_reason(r.finish);
  return rec;
}

}  // namespace kvgate::serving
