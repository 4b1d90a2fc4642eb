// run_load: sends a planned workload to the server and waits for every
// request's end.
//
// Open loop, as `vllm bench serve` is: a request goes out at its arrival
// offset whether or not earlier ones have finished, except that
//   - a conversation's next turn waits for the turn before it
//     (PlannedRequest::after), and
//   - with max_concurrency > 0, at most that many are in flight; the rest
//     queue in the client, in the order they became due (as vLLM's
//     --max-concurrency semaphore does). TTFT is counted from the moment a
//     request is actually sent, not from its arrival offset.
// A progress line on stderr every progress_interval_s (0: none): done,
// failed, in flight, queued.
//
// Threads: runs the io_context on the calling thread until the run ends.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "gateway/client/connection_pool.h"
#include "gateway/tools/loadgen/request_outcome.h"
#include "gateway/tools/loadgen/workload.h"

namespace kvgate::loadgen {

struct RunSettings {
  std::string model;
  std::vector<std::string> api_keys;  // one per tenant index of the workload
  int32_t max_concurrency = 0;        // 0: no limit
  std::chrono::steady_clock::duration timeout = std::chrono::seconds(600);
  double progress_interval_s = 5;
  std::FILE* progress = stderr;
};

struct RunResult {
  std::vector<RequestOutcome> outcomes;  // by workload index
  double duration_s = 0;                 // from the start to the last request's end
  int32_t peak_in_flight = 0;
  int64_t connections_opened = 0;
};

// Throws kvgate::Error when the workload names a tenant without a key.
RunResult run_load(boost::asio::io_context& io, client::ConnectionPool& pool, const Workload& w, const RunSettings& s);

}  // namespace kvgate::loadgen
