// BenchReport: a run's figures, as `vllm bench serve` reports them, plus
// what a prefix-caching, billing gateway adds: the hit rate the server
// reported next to the workload's ideal, and the bill with and without
// caching.
//
//   completed / failed        failed by kind ("http 429", "connection", ...)
//   duration                  first send to last end, seconds
//   throughput                completed requests/s; output and total tokens/s
//   TTFT                      send to first chunk with a choice
//   TPOT                      per request, (end - first chunk) / (output - 1), output > 1
//   ITL                       every gap between a request's chunks
//   E2EL                      send to end
//   hit rate                  cached / prompt tokens over the completed
//                             requests' usage chunks; with the server's own
//                             counters (GET /metrics) when they were read
//   bill                      the deltas of kvgate_cost_usd_total and
//                             kvgate_cost_without_cache_usd_total over the
//                             run (source "metrics"), else the sum of the
//                             usage chunks' kvgate.cost_micros (source
//                             "usage", no without-caching figure)
// Latencies in milliseconds: mean, p50, p90, p99, max. Token counts are the
// server's (usage), not the client's.
//
// Pure values and functions; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "gateway/tools/loadgen/latency_summary.h"
#include "gateway/tools/loadgen/load_run.h"
#include "gateway/tools/loadgen/workload.h"

namespace kvgate::loadgen {

struct Bill {
  std::string source;  // "metrics", "usage", or "" when none is known
  std::optional<double> cost_usd;
  std::optional<double> cost_without_cache_usd;
};

// Deltas of the server's own counters over the run, when GET /metrics was read.
struct ServerCacheCounters {
  double queries_tokens = 0;
  double hits_tokens = 0;
};

struct ReportContext {
  std::string label;             // names the run in tables ("synthetic 2 req/s, cache on")
  double request_rate = 0;       // infinity when all at once; 0 when arrivals are the trace's
  int32_t max_concurrency = 0;
  int32_t server_block_size = 16;  // for the ideal hit rate
};

struct BenchReport {
  std::string label;
  std::string workload;
  std::string description;
  double request_rate = 0;
  int32_t max_concurrency = 0;

  int64_t requests = 0;
  int64_t completed = 0;
  int64_t failed = 0;
  std::map<std::string, int64_t> failures;  // kind -> count
  std::vector<std::string> failure_examples;

  double duration_s = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t cached_tokens = 0;
  double request_throughput = 0;
  double output_throughput = 0;
  double total_token_throughput = 0;
  int32_t peak_in_flight = 0;
  int64_t connections_opened = 0;

  LatencySummary ttft_ms;
  LatencySummary tpot_ms;
  LatencySummary itl_ms;
  LatencySummary e2el_ms;

  double cache_hit_rate = 0;
  IdealCache ideal;
  std::optional<double> server_hit_rate;

  Bill bill;
};

// The usage-chunk bill: the sum of cost_micros over completed requests,
// when every one carried it.
Bill bill_from_usage(const RunResult& run);

BenchReport make_report(const Workload& w, const RunResult& run, const ReportContext& ctx, const Bill& bill,
                        const std::optional<ServerCacheCounters>& server);

// vLLM's flat keys (completed, request_throughput, mean_ttft_ms,
// median_ttft_ms, p99_ttft_ms, ...) and kvgate's (cache_hit_rate,
// ideal_cache_hit_rate, cost_usd, cost_without_cache_usd, ...). A figure
// that was not measured is null.
boost::json::object to_json(const BenchReport& r);

// The human form, laid out as vllm bench serve prints its result.
std::string to_table(const BenchReport& r);

}  // namespace kvgate::loadgen
