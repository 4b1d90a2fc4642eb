// Pure mappings from the engine's result to tenancy's records; any thread.
#include "gateway/serving/billed_usage.h"

#include <algorithm>

namespace kvgate::serving {
namespace {

uint64_t u64(int32_t v) { return static_cast<uint64_t>(std::max<int32_t>(v, 0)); }

}  // namespace

tenancy::TokenUsage token_usage(const RequestResult& r, std::span<const PinSpan> pins, int32_t block_size) {
  tenancy::TokenUsage u;
  u.prompt_tokens = u64(r.prompt_tokens);
  u.cached_device = u64(r.cached_device_tokens);
  u.cached_host = u64(r.cached_host_tokens);
  u.cached_disk = u64(r.cached_disk_tokens);
  u.fresh_prefill = u64(r.fresh_prefill_tokens);
  u.cache_written = u64(r.cache_written_tokens);
  u.output_tokens = r.output.size();
  if (r.pinned_tokens <= 0 || block_size <= 0) return u;
  // Whole blocks: the cached prefix ends on a block boundary, except when
  // the whole prompt was cached and its last token run again (cached =
  // prompt - 1), whose block was still a hit.
  const uint64_t bs = static_cast<uint64_t>(block_size);
  const uint64_t read_end = (u.cached() + bs - 1) / bs * bs;
  uint64_t end_5m = 0, end_1h = 0;
  for (const PinSpan& p : pins) {
    const uint64_t end = std::min(u64(p.tokens), u.prompt_tokens) / bs * bs;
    uint64_t& e = p.ttl <= kShortPinTtl ? end_5m : end_1h;
    e = std::max(e, end);
  }
  const auto written = [&](uint64_t from, uint64_t to) { return to > from ? to - from : 0; };
  u.cache_write_1h = written(read_end, end_1h);
  u.cache_write_5m = written(std::max(read_end, end_1h), end_5m);
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

tenancy::LedgerRecord ledger_record(const RecordIds& ids, const tenancy::TokenUsage& usage, FinishReason finish,
                                    const RequestTiming& t, const WallAnchor& clock) {
  tenancy::LedgerRecord rec;
  rec.request_id = ids.request_id;
  rec.tenant_id = ids.tenant_id;
  rec.key_id = ids.key_id;
  rec.model = ids.model;
  rec.arrival_ns = clock.to_wall_ns(t.arrival);
  rec.first_token_ns = t.token_times.empty() ? 0 : clock.to_wall_ns(t.first_token);
  rec.finish_ns = std::max(clock.to_wall_ns(t.finished), rec.arrival_ns);
  if (rec.first_token_ns != 0) rec.first_token_ns = std::clamp(rec.first_token_ns, rec.arrival_ns, rec.finish_ns);
  rec.tokens = usage;
  rec.finish_reason = ledger_finish_reason(finish);
  return rec;
}

}  // namespace kvgate::serving
