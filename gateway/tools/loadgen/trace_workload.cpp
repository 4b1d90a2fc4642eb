// Mooncake records -> planned requests, scaled. Pure; any thread.
#include "gateway/tools/loadgen/trace_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.h"
#include "gateway/tools/loadgen/token_blocks.h"

namespace kvgate::loadgen {

namespace {

// Independent choices from one user id: different salts, so that keeping
// one user in N never keeps only the users of one tenant.
constexpr uint64_t kSampleSalt = 0x5A17'5A17'0000'0001ull;
constexpr uint64_t kTenantSalt = 0x7E4A'4E70'0000'0002ull;

void check(const TraceScaling& s) {
  if (s.block_tokens < 1) throw Error("--block-tokens must be at least 1");
  if (!(s.time_scale > 0) || !std::isfinite(s.time_scale)) throw Error("--time-scale must be a number above 0");
  if (!std::isfinite(s.output_scale)) throw Error("--output-scale must be a finite number");
  if (s.max_output_tokens < 0) throw Error("--max-output-tokens must be at least 0");
  if (s.max_prompt_tokens < 0) throw Error("--max-prompt-tokens must be at least 0");
  if (s.start_ms < 0) throw Error("--start-ms must be at least 0");
  if (s.max_requests < 0) throw Error("--max-requests must be at least 0");
  if (s.sample_users < 1) throw Error("--sample-users must be at least 1");
  if (s.tenants < 1) throw Error("--tenants must be at least 1");
  if (s.trace_block_tokens < 1) throw Error("the trace's block size must be at least 1");
}

}  // namespace

uint64_t trace_user(const trace::TraceRecord& r) {
  if (r.hash_ids.size() > 1) return r.hash_ids[1];
  return r.hash_ids.empty() ? 0 : r.hash_ids[0];
}

Workload trace_workload(const std::vector<trace::TraceRecord>& trace, const TraceScaling& s) {
  check(s);
  const TokenBlocks blocks(s.block_tokens, s.vocab_size, s.seed);
  const double scale = static_cast<double>(s.block_tokens) / static_cast<double>(s.trace_block_tokens);
  const double out_scale = s.output_scale < 0 ? scale : s.output_scale;

  Workload w;
  w.name = "trace";
  w.tenants = s.tenants;
  int64_t first_ms = -1;
  for (const trace::TraceRecord& r : trace) {
    if (r.timestamp_ms < s.start_ms) continue;
    const uint64_t user = trace_user(r);
    if (s.sample_users > 1 && mix64(user ^ kSampleSalt) % static_cast<uint64_t>(s.sample_users) != 0) continue;
    if (s.max_requests && static_cast<int64_t>(w.requests.size()) >= s.max_requests) break;
    if (first_ms < 0) first_ms = r.timestamp_ms;

    PlannedRequest p;
    p.trace_line = r.line;
    p.arrival_s = static_cast<double>(r.timestamp_ms - first_ms) * s.time_scale / 1000.0;
    p.tenant = static_cast<int32_t>(mix64(user ^ kTenantSalt) % static_cast<uint64_t>(s.tenants));
    const size_t n = r.hash_ids.size();
    // The trace's last block holds 1..512 tokens; keep its share, at least one.
    const int64_t last = r.input_length - s.trace_block_tokens * static_cast<int64_t>(n - 1);
    const auto last_scaled = static_cast<int32_t>(
        std::clamp<int64_t>(std::llround(static_cast<double>(last) * scale), 1, s.block_tokens));
    p.prompt.reserve((n - 1) * s.block_tokens + last_scaled);
    for (size_t i = 0; i < n; ++i) blocks.append(r.hash_ids[i], i + 1 < n ? s.block_tokens : last_scaled, p.prompt);
    if (s.max_prompt_tokens && static_cast<int64_t>(p.prompt.size()) > s.max_prompt_tokens)
      p.prompt.resize(s.max_prompt_tokens);
    // Clamped as a double first: a huge output_length times a large scale
    // must not overflow the conversion.
    const double scaled_out = std::clamp(static_cast<double>(r.output_length) * out_scale, 1.0, 2147483647.0);
    int64_t out = std::max<int64_t>(1, std::llround(scaled_out));
    if (s.max_output_tokens) out = std::min<int64_t>(out, s.max_output_tokens);
    p.max_tokens = static_cast<int32_t>(out);
    w.requests.push_back(std::move(p));
  }

  char line[400];
  std::snprintf(line, sizeof line,
                "Mooncake trace %s: %zu requests from %lld ms (1 user in %d), blocks of %lld -> %d tokens, "
                "outputs x%.4g%s, time x%.4g, %d tenants",
                s.source.c_str(), w.requests.size(), static_cast<long long>(s.start_ms), s.sample_users, static_cast<long long>(s.trace_block_tokens),
                s.block_tokens, out_scale,
                s.max_output_tokens ? (" (at most " + std::to_string(s.max_output_tokens) + ")").c_str() : "",
                s.time_scale, s.tenants);
  w.description = line;
  return w;
}

}  // namespace kvgate::loadgen
