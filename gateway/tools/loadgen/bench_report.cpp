// A run's outcomes -> figures, JSON and the printed result. Pure; any thread.
#include "gateway/tools/loadgen/bench_report.h"

#include <cmath>
#include <cstdio>

#include <boost/json/value.hpp>

namespace kvgate::loadgen {
namespace json = boost::json;

namespace {

double ms(double s) { return s * 1000.0; }

json::value opt(const std::optional<double>& v) { return v ? json::value(*v) : json::value(nullptr); }

void put_summary(json::object& o, const char* name, const LatencySummary& s) {
  const std::string n(name);
  // vLLM's keys; a metric with no observation (TPOT of 1-token outputs) is null.
  auto v = [&](double x) { return s.count ? json::value(x) : json::value(nullptr); };
  o["mean_" + n + "_ms"] = v(s.mean);
  o["median_" + n + "_ms"] = v(s.p50);
  o["p90_" + n + "_ms"] = v(s.p90);
  o["p99_" + n + "_ms"] = v(s.p99);
  o["max_" + n + "_ms"] = v(s.max);
  o[n + "_count"] = s.count;
}

void line(std::string& out, const char* key, const std::string& value) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-45s%s\n", key, value.c_str());
  out += buf;
}
std::string num(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
void section(std::string& out, const char* title) {
  const std::string t(title);
  const size_t width = 50;
  const size_t pad = t.size() + 2 < width ? (width - t.size()) / 2 : 1;
  out += std::string(pad, '-') + t + std::string(width > pad + t.size() ? width - pad - t.size() : 1, '-') + "\n";
}
void latency_rows(std::string& out, const char* name, const LatencySummary& s) {
  const std::string n(name);
  if (!s.count) {
    line(out, ("Mean " + n + " (ms):").c_str(), "-");
    return;
  }
  line(out, ("Mean " + n + " (ms):").c_str(), num(s.mean));
  line(out, ("Median " + n + " (ms):").c_str(), num(s.p50));
  line(out, ("P90 " + n + " (ms):").c_str(), num(s.p90));
  line(out, ("P99 " + n + " (ms):").c_str(), num(s.p99));
}

}  // namespace

Bill bill_from_usage(const RunResult& run) {
  Bill b;
  int64_t micros = 0;
  bool any = false;
  for (const RequestOutcome& o : run.outcomes) {
    if (!o.ok || !o.usage) continue;
    if (!o.usage->cost_micros) return b;  // a server that does not say what it charged
    micros += *o.usage->cost_micros;
    any = true;
  }
  if (!any) return b;
  b.source = "usage";
  b.cost_usd = static_cast<double>(micros) / 1e6;
  return b;
}

BenchReport make_report(const Workload& w, const RunResult& run, const ReportContext& ctx, const Bill& bill,
                        const std::optional<ServerCacheCounters>& server) {
  BenchReport r;
  r.label = ctx.label;
  r.workload = w.name;
  r.description = w.description;
  r.request_rate = ctx.request_rate;
  r.max_concurrency = ctx.max_concurrency;
  r.requests = static_cast<int64_t>(run.outcomes.size());
  r.duration_s = run.duration_s;
  r.peak_in_flight = run.peak_in_flight;
  r.connections_opened = run.connections_opened;

  std::vector<double> ttft, tpot, itl, e2el;
  for (const RequestOutcome& o : run.outcomes) {
    if (!o.ok) {
      ++r.failed;
      const std::string kind = o.failure.empty() ? "not sent" : o.failure;
      ++r.failures[kind];
      if (r.failure_examples.size() < 3) r.failure_examples.push_back(kind + ": " + o.error);
      continue;
    }
    ++r.completed;
    const StreamUsage& u = *o.usage;
    r.input_tokens += u.prompt_tokens;
    r.output_tokens += u.completion_tokens;
    r.cached_tokens += u.cached_tokens;
    e2el.push_back(ms(o.latency_s()));
    if (o.has_first_token()) {
      ttft.push_back(ms(o.ttft_s()));
      if (u.completion_tokens > 1)
        tpot.push_back(ms((o.end_s - o.chunk_s.front()) / static_cast<double>(u.completion_tokens - 1)));
      for (size_t i = 1; i < o.chunk_s.size(); ++i) itl.push_back(ms(o.chunk_s[i] - o.chunk_s[i - 1]));
    }
  }
  r.ttft_ms = summarize(std::move(ttft));
  r.tpot_ms = summarize(std::move(tpot));
  r.itl_ms = summarize(std::move(itl));
  r.e2el_ms = summarize(std::move(e2el));
  if (r.duration_s > 0) {
    r.request_throughput = static_cast<double>(r.completed) / r.duration_s;
    r.output_throughput = static_cast<double>(r.output_tokens) / r.duration_s;
    r.total_token_throughput = static_cast<double>(r.input_tokens + r.output_tokens) / r.duration_s;
  }
  r.cache_hit_rate = r.input_tokens ? static_cast<double>(r.cached_tokens) / static_cast<double>(r.input_tokens) : 0;
  r.ideal = ideal_cache(w, ctx.server_block_size);
  if (server && server->queries_tokens > 0) r.server_hit_rate = server->hits_tokens / server->queries_tokens;
  r.bill = bill;
  return r;
}

json::object to_json(const BenchReport& r) {
  json::object o;
  o["label"] = r.label;
  o["workload"] = r.workload;
  o["description"] = r.description;
  o["request_rate"] = std::isinf(r.request_rate) ? json::value("inf") : json::value(r.request_rate);
  o["max_concurrency"] = r.max_concurrency ? json::value(r.max_concurrency) : json::value(nullptr);
  o["num_prompts"] = r.requests;
  o["completed"] = r.completed;
  o["failed"] = r.failed;
  json::object kinds;
  for (const auto& [k, n] : r.failures) kinds[k] = n;
  o["failures"] = std::move(kinds);
  json::array examples;
  for (const auto& e : r.failure_examples) examples.emplace_back(e);
  o["failure_examples"] = std::move(examples);
  o["duration"] = r.duration_s;
  o["total_input_tokens"] = r.input_tokens;
  o["total_output_tokens"] = r.output_tokens;
  o["request_throughput"] = r.request_throughput;
  o["output_throughput"] = r.output_throughput;
  o["total_token_throughput"] = r.total_token_throughput;
  o["max_concurrent_requests"] = r.peak_in_flight;
  o["connections_opened"] = r.connections_opened;
  put_summary(o, "ttft", r.ttft_ms);
  put_summary(o, "tpot", r.tpot_ms);
  put_summary(o, "itl", r.itl_ms);
  put_summary(o, "e2el", r.e2el_ms);
  o["cached_tokens"] = r.cached_tokens;
  o["cache_hit_rate"] = r.cache_hit_rate;
  o["server_cache_hit_rate"] = opt(r.server_hit_rate);
  o["ideal_cached_tokens"] = r.ideal.cached_tokens;
  o["ideal_prompt_tokens"] = r.ideal.prompt_tokens;
  o["ideal_cache_hit_rate"] = r.ideal.hit_rate();
  o["bill_source"] = r.bill.source.empty() ? json::value(nullptr) : json::value(r.bill.source);
  o["cost_usd"] = opt(r.bill.cost_usd);
  o["cost_without_cache_usd"] = opt(r.bill.cost_without_cache_usd);
  std::optional<double> saved;
  if (r.bill.cost_usd && r.bill.cost_without_cache_usd) saved = *r.bill.cost_without_cache_usd - *r.bill.cost_usd;
  o["cache_saved_usd"] = opt(saved);
  return o;
}

std::string to_table(const BenchReport& r) {
  std::string out;
  out += "============ Serving Benchmark Result ============\n";
  if (!r.label.empty()) line(out, "Run:", r.label);
  line(out, "Workload:", r.description);
  line(out, "Successful requests:", std::to_string(r.completed));
  line(out, "Failed requests:", std::to_string(r.failed));
  for (const auto& [k, n] : r.failures) line(out, ("  " + k + ":").c_str(), std::to_string(n));
  for (const auto& e : r.failure_examples) line(out, "  e.g.", e.substr(0, 160));
  line(out, "Maximum request concurrency:", r.max_concurrency ? std::to_string(r.max_concurrency) : "none");
  line(out, "Peak concurrent requests:", std::to_string(r.peak_in_flight));
  line(out, "Benchmark duration (s):", num(r.duration_s));
  line(out, "Total input tokens:", std::to_string(r.input_tokens));
  line(out, "Total generated tokens:", std::to_string(r.output_tokens));
  line(out, "Request throughput (req/s):", num(r.request_throughput));
  line(out, "Output token throughput (tok/s):", num(r.output_throughput));
  line(out, "Total Token throughput (tok/s):", num(r.total_token_throughput));
  section(out, "Time to First Token");
  latency_rows(out, "TTFT", r.ttft_ms);
  section(out, "Time per Output Token (excl. 1st token)");
  latency_rows(out, "TPOT", r.tpot_ms);
  section(out, "Inter-token Latency");
  latency_rows(out, "ITL", r.itl_ms);
  section(out, "End-to-end Latency");
  latency_rows(out, "E2EL", r.e2el_ms);
  section(out, "Prefix cache");
  line(out, "Cached prompt tokens:", std::to_string(r.cached_tokens));
  line(out, "Cache hit rate (usage):", num(100 * r.cache_hit_rate, 1) + "%");
  line(out, "Cache hit rate (server counters):", r.server_hit_rate ? num(100 * *r.server_hit_rate, 1) + "%" : "-");
  line(out, "Ideal hit rate (unbounded, in order):", num(100 * r.ideal.hit_rate(), 1) + "%");
  section(out, "Bill");
  line(out, "Billed, with caching (USD):", r.bill.cost_usd ? num(*r.bill.cost_usd, 6) : "-");
  line(out, "Without caching (USD):", r.bill.cost_without_cache_usd ? num(*r.bill.cost_without_cache_usd, 6) : "-");
  if (r.bill.cost_usd && r.bill.cost_without_cache_usd && *r.bill.cost_without_cache_usd > 0)
    line(out, "Saved by caching:",
         num(100 * (1 - *r.bill.cost_usd / *r.bill.cost_without_cache_usd), 1) + "%");
  line(out, "Bill read from:", r.bill.source.empty() ? "-" : r.bill.source);
  out += "==================================================\n";
  return out;
}

}  // namespace kvgate::loadgen
