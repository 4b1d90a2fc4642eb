// One streamed POST /v1/completions with token ids, timed as it streams:
//
//   {"model": M, "prompt": [ids], "max_tokens": n, "temperature": 0,
//    "ignore_eos": true, "stream": true, "stream_options": {"include_usage": true}}
//
// ignore_eos (vLLM's extension, which kvgate honours) makes the output
// exactly max_tokens long, so every run of a workload asks the engine for
// the same work. The request succeeds when the status is 200, the stream
// ends with [DONE], no error frame came and the usage chunk did.
//
// Threads: the run's one io_context thread; `done` runs there.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "cache/ids.h"
#include "gateway/client/connection_pool.h"
#include "gateway/tools/loadgen/request_outcome.h"

namespace kvgate::loadgen {

struct CompletionCall {
  std::string model;
  std::string api_key;
  std::chrono::steady_clock::duration timeout = std::chrono::seconds(600);
};

// The request's JSON body (exposed for the tests).
std::string completion_body(const std::string& model, const Tokens& prompt, int32_t max_tokens);

// `outcome` comes filled with index, tenant and the sizes; start_s, the
// chunks, the usage and the end are filled here against `run_start`.
void start_completion(client::ConnectionPool& pool, std::chrono::steady_clock::time_point run_start,
                      const CompletionCall& call, const Tokens& prompt, int32_t max_tokens, RequestOutcome outcome,
                      std::function<void(RequestOutcome)> done);

}  // namespace kvgate::loadgen
