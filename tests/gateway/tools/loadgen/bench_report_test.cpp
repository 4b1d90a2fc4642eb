// The report from known outcomes: counts, throughput, TTFT/TPOT/ITL/E2EL,
// failures by kind, the hit rate, the bill, and the JSON's keys.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "gateway/tools/loadgen/bench_report.h"

namespace kvgate::loadgen {
namespace {

RequestOutcome done(double start, std::vector<double> chunks, double end, int64_t prompt, int64_t cached,
                    int64_t out, std::optional<int64_t> cost = std::nullopt) {
  RequestOutcome o;
  o.ok = true;
  o.start_s = start;
  o.chunk_s = std::move(chunks);
  o.end_s = end;
  StreamUsage u;
  u.prompt_tokens = prompt;
  u.cached_tokens = cached;
  u.completion_tokens = out;
  u.cost_micros = cost;
  o.usage = u;
  return o;
}

RequestOutcome failed(const std::string& kind, const std::string& error) {
  RequestOutcome o;
  o.failure = kind;
  o.error = error;
  return o;
}

struct Fixture {
  Workload w;
  RunResult run;
  Fixture() {
    w.name = "synthetic";
    w.description = "two requests";
    w.requests.resize(4);
    run.outcomes = {done(0.0, {0.1, 0.2, 0.3}, 0.4, 100, 64, 3, 10),
                    done(1.0, {1.3, 1.4}, 1.5, 100, 0, 2, 20),
                    failed("http 429", "rate limited"),
                    failed("connection", "connect: refused")};
    run.duration_s = 2.0;
    run.peak_in_flight = 2;
  }
};

TEST(BenchReport, CountsAndLatencies) {
  Fixture f;
  const BenchReport r = make_report(f.w, f.run, {}, bill_from_usage(f.run), std::nullopt);
  EXPECT_EQ(r.requests, 4);
  EXPECT_EQ(r.completed, 2);
  EXPECT_EQ(r.failed, 2);
  EXPECT_EQ(r.failures.at("http 429"), 1);
  EXPECT_EQ(r.failures.at("connection"), 1);
  EXPECT_EQ(r.input_tokens, 200);
  EXPECT_EQ(r.output_tokens, 5);
  EXPECT_DOUBLE_EQ(r.request_throughput, 1.0);
  EXPECT_DOUBLE_EQ(r.output_throughput, 2.5);
  EXPECT_DOUBLE_EQ(r.total_token_throughput, 102.5);
  // TTFT: 100 ms and 300 ms.
  EXPECT_EQ(r.ttft_ms.count, 2u);
  EXPECT_NEAR(r.ttft_ms.mean, 200, 1e-9);
  // TPOT: (0.4 - 0.1) / 2 = 150 ms, (1.5 - 1.3) / 1 = 200 ms.
  EXPECT_NEAR(r.tpot_ms.mean, 175, 1e-9);
  // ITL: 100, 100 (first request), 100 (second).
  EXPECT_EQ(r.itl_ms.count, 3u);
  EXPECT_NEAR(r.itl_ms.p99, 100, 1e-9);
  // E2EL: 400 and 500 ms.
  EXPECT_NEAR(r.e2el_ms.p50, 450, 1e-9);
  EXPECT_DOUBLE_EQ(r.cache_hit_rate, 0.32);
  ASSERT_TRUE(r.bill.cost_usd);
  EXPECT_EQ(r.bill.source, "usage");
  EXPECT_NEAR(*r.bill.cost_usd, 30e-6, 1e-15);
  EXPECT_FALSE(r.bill.cost_without_cache_usd);
}

TEST(BenchReport, NoUsageCostMeansNoUsageBill) {
  Fixture f;
  f.run.outcomes[1].usage->cost_micros.reset();
  EXPECT_TRUE(bill_from_usage(f.run).source.empty());
}

TEST(BenchReport, JsonHasVllmsKeysAndNullsForWhatWasNotMeasured) {
  Fixture f;
  Bill bill{"metrics", 0.5, 2.0};
  const BenchReport r = make_report(f.w, f.run, {"run a", 2.0, 8, 16}, bill, ServerCacheCounters{200, 64});
  const boost::json::object j = to_json(r);
  for (const char* key : {"completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
                          "request_throughput", "output_throughput", "total_token_throughput", "mean_ttft_ms",
                          "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
                          "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms", "median_e2el_ms",
                          "p99_e2el_ms", "cache_hit_rate", "ideal_cache_hit_rate", "cost_usd",
                          "cost_without_cache_usd", "cache_saved_usd", "server_cache_hit_rate"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j.at("label").as_string(), "run a");
  EXPECT_EQ(j.at("max_concurrency").as_int64(), 8);
  EXPECT_DOUBLE_EQ(j.at("cache_saved_usd").as_double(), 1.5);
  EXPECT_DOUBLE_EQ(j.at("server_cache_hit_rate").as_double(), 0.32);
  EXPECT_EQ(j.at("failures").as_object().at("http 429").as_int64(), 1);

  // Nothing measured: a run where every request failed.
  Fixture g;
  g.run.outcomes = {failed("http 503", "busy")};
  const boost::json::object k = to_json(make_report(g.w, g.run, {}, bill_from_usage(g.run), std::nullopt));
  EXPECT_TRUE(k.at("mean_ttft_ms").is_null());
  EXPECT_TRUE(k.at("cost_usd").is_null());
  EXPECT_TRUE(k.at("server_cache_hit_rate").is_null());
  EXPECT_TRUE(k.at("max_concurrency").is_null());
}

TEST(BenchReport, TheTableNamesEverySection) {
  Fixture f;
  const std::string t = to_table(make_report(f.w, f.run, {}, Bill{"metrics", 0.5, 2.0}, std::nullopt));
  for (const char* s : {"Successful requests:", "Failed requests:", "Request throughput (req/s):", "Mean TTFT (ms):",
                        "P99 TPOT (ms):", "Median ITL (ms):", "P90 E2EL (ms):", "Cache hit rate (usage):",
                        "Without caching (USD):", "Saved by caching:", "http 429"})
    EXPECT_NE(t.find(s), std::string::npos) << s;
}

}  // namespace
}  // namespace kvgate::loadgen
