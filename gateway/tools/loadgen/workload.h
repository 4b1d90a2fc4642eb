// Workload: the requests a benchmark run sends, planned before the first
// one goes out, so that the same flags always send the same prompts at the
// same offsets whatever the server does.
//
// A request is sent at its arrival offset, or, when it continues a
// conversation (`after` >= 0), once that earlier request has finished,
// whichever is later: a user does not send turn k+1 before reading turn k.
//
// Plain values; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache/ids.h"

namespace kvgate::loadgen {

struct PlannedRequest {
  double arrival_s = 0;   // offset from the run's start
  int32_t tenant = 0;     // index into the run's tenants (their keys)
  int64_t after = -1;     // index of the request this one waits for, or -1
  Tokens prompt;
  int32_t max_tokens = 1;  // sent with ignore_eos: the exact output length
  int64_t trace_line = 0;  // the trace line it replays; 0 for a synthetic one
};

struct Workload {
  std::string name;         // "synthetic", "trace"
  std::string description;  // one line: what was planned, for the report
  int32_t tenants = 1;
  std::vector<PlannedRequest> requests;
};

// Prompt tokens a server with an unbounded prefix cache of `block_size`
// token blocks would serve from cache if requests ran one at a time in plan
// order: for each request, the longest run of its whole blocks already
// prefilled by an earlier request of the same tenant (a whole-prompt hit
// still prefills its last token, as kvgate's rule has it: prefix-cache.md).
// The run's hit rate is read against cached / prompt of this.
struct IdealCache {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;
  double hit_rate() const { return prompt_tokens ? static_cast<double>(cached_tokens) / prompt_tokens : 0; }
};
IdealCache ideal_cache(const Workload& w, int32_t block_size);

}  // namespace kvgate::loadgen
