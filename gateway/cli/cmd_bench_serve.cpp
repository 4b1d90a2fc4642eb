// kvgate bench-serve: the load generator. Many concurrent streaming clients
// over HTTPS against a running `kvgate serve`, one API key per tenant, and
// the figures `vllm bench serve` reports plus the hit rate and the bill
// (gateway/loadgen/ has the parts; docs/benchmarks.md "Serving under load").
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/error.h"
#include "gateway/cli/commands.h"
#include "gateway/tools/loadgen/bench_report.h"
#include "gateway/tools/loadgen/bench_session.h"
#include "gateway/tools/loadgen/synthetic_workload.h"
#include "gateway/tools/trace/trace_reader.h"
#include "gateway/tools/loadgen/trace_workload.h"

namespace kvgate::cli {
namespace {

using namespace kvgate::loadgen;

struct BenchServeOptions {
  std::string url;
  std::string cacert;
  bool insecure = false;
  std::vector<std::string> api_keys;
  std::string admin_token;
  std::string admin_token_file;
  std::string tenant_prefix = "bench";
  std::string plan_id;
  std::string model;

  std::string workload = "synthetic";
  int32_t tenants = 4;
  SyntheticSpec synthetic;
  std::string request_rate = "inf";
  TraceScaling trace;
  std::string trace_file;

  int32_t max_concurrency = 0;
  int32_t vocab_size = 32000;
  uint64_t seed = 0;
  int32_t server_block_size = 16;
  std::string label;
  double request_timeout_s = 600;
  double progress_interval_s = 5;
  bool json = false;
  bool dry_run = false;
};

std::string default_trace() {
  const char* shared = std::getenv("KVGATE_SHARED");
  return std::string(shared && *shared ? shared : "../shared") + "/traces/conversation_trace.jsonl";
}

double parse_rate(const std::string& s) {
  if (s == "inf" || s == "infinity") return std::numeric_limits<double>::infinity();
  char* end = nullptr;
  const double r = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end || !(r > 0) || std::isnan(r))
    throw Error("--request-rate " + s + ": expected a number of requests per second above 0, or inf");
  return r;
}

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the admin token file");
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) throw Error(path + ": the admin token file is empty");
  return token;
}

Workload plan(const BenchServeOptions& o, bool rate_given) {
  if (o.workload == "synthetic") {
    SyntheticSpec s = o.synthetic;
    s.tenants = o.tenants;
    s.vocab_size = o.vocab_size;
    s.seed = o.seed;
    s.request_rate = parse_rate(o.request_rate);
    return synthetic_workload(s);
  }
  if (o.workload == "trace") {
    if (rate_given)
      throw Error("--request-rate is for the synthetic workload: a trace arrives at its timestamps (see --time-scale)");
    TraceScaling t = o.trace;
    t.tenants = o.tenants;
    t.vocab_size = o.vocab_size;
    t.seed = o.seed;
    t.source = o.trace_file.empty() ? default_trace() : o.trace_file;
    return trace_workload(trace::read_trace_file(t.source), t);
  }
  throw Error("--workload " + o.workload + ": expected synthetic or trace");
}

// What a run would send, without sending it: for sizing a run to a machine.
void print_plan(const Workload& w, const BenchServeOptions& o) {
  int64_t prompt = 0, out = 0;
  size_t longest = 0;
  double span = 0;
  for (const PlannedRequest& p : w.requests) {
    prompt += static_cast<int64_t>(p.prompt.size());
    out += p.max_tokens;
    longest = std::max(longest, p.prompt.size());
    span = std::max(span, p.arrival_s);
  }
  const IdealCache ideal = ideal_cache(w, o.server_block_size);
  const double n = w.requests.empty() ? 1.0 : static_cast<double>(w.requests.size());
  if (o.json) {
    boost::json::object j{{"workload", w.name},
                          {"description", w.description},
                          {"requests", w.requests.size()},
                          {"tenants", w.tenants},
                          {"prompt_tokens", prompt},
                          {"mean_prompt_tokens", static_cast<double>(prompt) / n},
                          {"max_prompt_tokens", longest},
                          {"output_tokens", out},
                          {"arrival_span_s", span},
                          {"ideal_cached_tokens", ideal.cached_tokens},
                          {"ideal_cache_hit_rate", ideal.hit_rate()}};
    std::printf("%s\n", boost::json::serialize(j).c_str());
    return;
  }
  std::printf("%s\n", w.description.c_str());
  std::printf("requests %zu, tenants %d, prompt tokens %lld (mean %.1f, max %zu), output tokens %lld, "
              "arrivals over %.1f s, ideal hit rate %.1f%%\n",
              w.requests.size(), w.tenants, static_cast<long long>(prompt), static_cast<double>(prompt) / n, longest,
              static_cast<long long>(out), span, 100 * ideal.hit_rate());
}

void run(const BenchServeOptions& o, bool rate_given) {
  const Workload w = plan(o, rate_given);
  if (o.dry_run) return print_plan(w, o);
  if (o.url.empty()) throw Error("bench-serve: give --url (or --dry-run)");
  if (!(o.request_timeout_s > 0)) throw Error("--request-timeout-s must be above 0");

  SessionOptions s;
  s.url = o.url;
  s.tls.ca_file = o.cacert;
  s.tls.insecure = o.insecure;
  s.api_keys = o.api_keys;
  s.admin_token = o.admin_token_file.empty() ? o.admin_token : read_token_file(o.admin_token_file);
  s.tenant_prefix = o.tenant_prefix;
  s.plan_id = o.plan_id;
  s.run.model = o.model;
  s.run.max_concurrency = o.max_concurrency;
  s.run.timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(o.request_timeout_s));
  s.run.progress_interval_s = o.progress_interval_s;
  s.report.label = o.label;
  s.report.request_rate = o.workload == "synthetic" ? parse_rate(o.request_rate) : 0;
  s.report.server_block_size = o.server_block_size;
  const BenchReport r = run_bench_session(w, s, stderr);
  if (o.json)
    std::printf("%s\n", boost::json::serialize(to_json(r)).c_str());
  else
    std::printf("%s", to_table(r).c_str());
}

}  // namespace

void add_bench_serve(CLI::App& app) {
  auto o = std::make_shared<BenchServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-serve", "Load a running kvgate serve with concurrent streaming clients and report as vllm bench serve");
  cmd->add_option("--url", o->url, "the server, https://HOST:PORT");
  auto* cacert = cmd->add_option("--cacert", o->cacert, "PEM certificate to trust (the server's self-signed one)");
  auto* insecure = cmd->add_flag("--insecure", o->insecure, "do not verify the server's certificate");
  cacert->excludes(insecure);
  auto* keys = cmd->add_option("--api-key", o->api_keys, "a tenant's API key; repeat, one per tenant");
  auto* admin = cmd->add_option("--admin-token", o->admin_token, "make the tenants and read /metrics with this token");
  auto* admin_file = cmd->add_option("--admin-token-file", o->admin_token_file, "read the admin token from a file");
  admin->excludes(admin_file);
  keys->excludes(admin)->excludes(admin_file);
  cmd->add_option("--tenant-prefix", o->tenant_prefix, "ids of the tenants made: PREFIX-0, PREFIX-1, ...")
      ->capture_default_str();
  cmd->add_option("--plan", o->plan_id, "price plan of the tenants made (default: the server's)");
  cmd->add_option("--model", o->model, "model id to ask for (default: the first of GET /v1/models)");

  cmd->add_option("--workload", o->workload, "synthetic or trace")->capture_default_str();
  auto* tenants = cmd->add_option("--tenants", o->tenants, "tenants (with --api-key: the number of keys)")
                      ->capture_default_str();
  tenants->excludes(keys);
  cmd->add_option("--system-prompts", o->synthetic.system_prompts, "synthetic: shared system prompts")
      ->capture_default_str();
  cmd->add_option("--system-tokens", o->synthetic.system_tokens, "synthetic: tokens per system prompt")
      ->capture_default_str();
  cmd->add_option("--users", o->synthetic.users, "synthetic: users per tenant")->capture_default_str();
  cmd->add_option("--turns", o->synthetic.turns, "synthetic: turns per conversation")->capture_default_str();
  cmd->add_option("--user-tokens", o->synthetic.user_tokens, "synthetic: new user tokens per turn")
      ->capture_default_str();
  cmd->add_option("--output-tokens", o->synthetic.output_tokens, "synthetic: output tokens per turn")
      ->capture_default_str();
  auto* rate = cmd->add_option("--request-rate", o->request_rate,
                               "synthetic: Poisson arrivals, requests/s, or inf (all at once)")
                   ->capture_default_str();

  cmd->add_option("--trace", o->trace_file, "trace: Mooncake JSONL (default: conversation_trace.jsonl in ../shared)");
  cmd->add_option("--block-tokens", o->trace.block_tokens, "trace: tokens per hash id (the trace's are 512)")
      ->capture_default_str();
  cmd->add_option("--time-scale", o->trace.time_scale, "trace: arrival offsets times this (0.1 = 10x faster)")
      ->capture_default_str();
  cmd->add_option("--output-scale", o->trace.output_scale, "trace: output tokens times this (default block-tokens/512)");
  cmd->add_option("--max-output-tokens", o->trace.max_output_tokens, "trace: cap on output tokens (0: none)")
      ->capture_default_str();
  cmd->add_option("--max-prompt-tokens", o->trace.max_prompt_tokens, "trace: cut longer prompts to this (0: none)")
      ->capture_default_str();
  cmd->add_option("--start-ms", o->trace.start_ms, "trace: skip requests before this timestamp")->capture_default_str();
  cmd->add_option("--max-requests", o->trace.max_requests, "trace: at most this many requests (0: all)")
      ->capture_default_str();
  cmd->add_option("--sample-users", o->trace.sample_users, "trace: keep one conversation in N, each one whole")
      ->capture_default_str();

  cmd->add_option("--max-concurrency", o->max_concurrency, "requests in flight at most (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--vocab-size", o->vocab_size, "token ids are drawn below this (the model's vocabulary)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "seed of the token blocks and the arrivals")->capture_default_str();
  cmd->add_option("--server-block-size", o->server_block_size, "the server's KV block size, for the ideal hit rate")
      ->capture_default_str();
  cmd->add_option("--label", o->label, "names the run in the report");
  cmd->add_option("--request-timeout-s", o->request_timeout_s, "a request step that makes no progress this long fails")
      ->capture_default_str();
  cmd->add_option("--progress-interval-s", o->progress_interval_s, "progress line on stderr every N s (0: none)")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print the report as JSON");
  cmd->add_flag("--dry-run", o->dry_run, "print what would be sent, send nothing");
  cmd->callback([o, keys, rate] {
    if (keys->count()) o->tenants = static_cast<int32_t>(o->api_keys.size());
    run(*o, rate->count() > 0);
  });
}

}  // namespace kvgate::cli
