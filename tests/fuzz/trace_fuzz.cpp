// libFuzzer target: arbitrary bytes as a Mooncake trace file for
// `kvgate bench-serve --workload trace`. The reader must return records or
// throw kvgate::Error, never crash or throw anything else; what it accepts
// must hold the rules it checks (a chain covering the prompt, timestamps in
// order), and the scaled workload built from it must be well formed
// (prompts within the cap, outputs of at least one token, every tenant in
// range, requests that share hash ids share their scaled tokens).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "base/error.h"
#include "gateway/tools/loadgen/token_blocks.h"
#include "gateway/tools/trace/trace_reader.h"
#include "gateway/tools/loadgen/trace_workload.h"

using namespace kvgate::loadgen;
using namespace kvgate::trace;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<TraceRecord> trace;
  try {
    trace = parse_trace(text, "fuzz.jsonl");
  } catch (const kvgate::Error&) {
    return 0;
  }
  for (size_t i = 0; i < trace.size(); ++i) {
    const TraceRecord& r = trace[i];
    const auto blocks = static_cast<size_t>((r.input_length + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens);
    if (r.input_length < 1 || r.hash_ids.size() != blocks) std::abort();
    if (i && r.timestamp_ms < trace[i - 1].timestamp_ms) std::abort();
  }

  TraceScaling s;
  s.block_tokens = 16;
  s.tenants = 3;
  s.sample_users = 1 + static_cast<int32_t>(size % 3);
  s.time_scale = 0.01;
  s.max_output_tokens = 64;
  const Workload w = trace_workload(trace, s);  // valid scaling: an Error here is a bug
  for (const PlannedRequest& p : w.requests) {
    if (p.prompt.empty() || p.max_tokens < 1 || p.max_tokens > 64) std::abort();
    if (p.tenant < 0 || p.tenant >= 3 || !(p.arrival_s >= 0)) std::abort();
    for (kvgate::TokenId t : p.prompt)
      if (t < kFirstTokenId || t >= s.vocab_size) std::abort();
  }
  // Requests whose chains start alike share those blocks' tokens: every
  // whole block of a common run of ids (the last block may be cut short).
  std::unordered_map<int64_t, size_t> by_line;
  for (size_t i = 0; i < trace.size(); ++i) by_line[trace[i].line] = i;
  for (size_t i = 1; i < w.requests.size(); ++i) {
    const TraceRecord& a = trace[by_line.at(w.requests[i - 1].trace_line)];
    const TraceRecord& b = trace[by_line.at(w.requests[i].trace_line)];
    size_t k = 0;
    while (k < a.hash_ids.size() && k < b.hash_ids.size() && a.hash_ids[k] == b.hash_ids[k]) ++k;
    k = std::min({k, a.hash_ids.size() - 1, b.hash_ids.size() - 1});
    const kvgate::Tokens& pa = w.requests[i - 1].prompt;
    const kvgate::Tokens& pb = w.requests[i].prompt;
    if (!std::equal(pa.begin(), pa.begin() + static_cast<std::ptrdiff_t>(k * 16), pb.begin())) std::abort();
  }
  return 0;
}
