// RequestOutcome: what one benchmark request did, as its client saw it:
// when it was sent, when each streamed chunk with a token's text arrived,
// when it ended, the usage the server reported, or why it failed.
//
// Times are seconds from the run's start on the steady clock. TTFT is from
// sending to the first chunk with a choice, and the gaps between chunks
// are the inter-token latencies, as `vllm bench serve` counts them (a chunk
// normally carries one token; a token that ends mid-character arrives with
// the next).
//
// Plain values; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gateway/tools/loadgen/stream_frames.h"

namespace kvgate::loadgen {

struct RequestOutcome {
  int64_t index = -1;  // in the workload
  int32_t tenant = 0;
  int64_t prompt_tokens_sent = 0;
  int32_t max_tokens = 0;

  bool ok = false;
  // Why it failed, as a short kind for the report's counts ("http 429",
  // "error frame", "connection", "incomplete stream", "malformed stream"),
  // and the detail (the server's message, the socket error).
  std::string failure;
  std::string error;

  double start_s = 0;
  double end_s = 0;
  std::vector<double> chunk_s;  // arrival of every chunk with a choice
  std::optional<StreamUsage> usage;

  bool has_first_token() const { return !chunk_s.empty(); }
  double ttft_s() const { return chunk_s.empty() ? 0 : chunk_s.front() - start_s; }
  double latency_s() const { return end_s - start_s; }
};

}  // namespace kvgate::loadgen
