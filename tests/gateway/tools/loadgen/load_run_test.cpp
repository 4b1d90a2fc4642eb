// The load generator's client and scheduler against a fake OpenAI server on
// 127.0.0.1: gateway/server/'s Server (real TLS, keep-alive, chunked SSE)
// with a handler that streams what a kvgate completion streams, makes
// tenants and keys, and serves counters on /metrics. Checked: every request
// is sent, streamed and counted; a conversation's next turn goes out only
// after the turn before it ends; the concurrency limit holds at the server;
// failures are counted by kind; a kept-alive connection the server closed
// is retried; the bill comes from /metrics, else from the usage chunks.
// Nothing is timed: sleeps only make the server slow or idle.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <boost/json.hpp>

#include "base/error.h"
#include "gateway/tools/loadgen/bench_session.h"
#include "gateway/tools/loadgen/synthetic_workload.h"
#include "gateway/server/server.h"
#include "gateway/server/sse.h"
#include "tests/temp_dir.h"

namespace kvgate::loadgen {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using server::HttpRequest;
using server::Reply;

constexpr const char* kAdmin = "kvga-test";

// The fake server's behaviour and what it saw.
class FakeOpenAI {
 public:
  explicit FakeOpenAI(bool with_metrics = true, std::chrono::milliseconds idle_timeout = 60s)
      : with_metrics_(with_metrics) {
    server::ServerOptions o;
    o.https_port = 0;
    o.tls.self_signed_dir = dir_.path();
    o.idle_timeout = idle_timeout;
    o.close_linger = 20ms;  // an idle client never closes its end: do not wait for it
    worker_ = std::thread([this] { work(); });
    server_.emplace(o, [this](HttpRequest r, Reply rep) { handle(std::move(r), std::move(rep)); });
    server_->start();
  }
  ~FakeOpenAI() {
    server_->stop(2s);
    {
      std::lock_guard l(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  std::string url() const { return "https://127.0.0.1:" + std::to_string(*server_->https_port()); }
  std::string cert() const { return server_->certificate()->cert_file.string(); }

  std::set<std::string> models_asked() {
    std::lock_guard l(mu_);
    return models_;
  }
  std::set<std::string> keys_used() {
    std::lock_guard l(mu_);
    return keys_;
  }
  int max_open() const { return max_open_; }
  bool eventually_no_connections() const {
    for (auto deadline = std::chrono::steady_clock::now() + 20s; std::chrono::steady_clock::now() < deadline;) {
      if (server_->open_connections() == 0) return true;
      std::this_thread::sleep_for(2ms);
    }
    return false;
  }
  int completions() const { return completions_; }

 private:
  struct Stream {
    Reply reply;
    int64_t prompt_tokens;
    int64_t max_tokens;
    std::string tenant;
  };

  void handle(HttpRequest r, Reply rep) {
    const std::string auth(r.header("authorization").value_or(""));
    const std::string path(r.path());
    auto send_json = [&](int status, const json::value& v) {
      rep.send(status, {{"Content-Type", "application/json"}}, json::serialize(v));
    };
    if (path == "/admin/tenants" && r.method == "POST") {
      if (auth != std::string("Bearer ") + kAdmin) return send_json(401, {{"error", {{"message", "no"}}}});
      return send_json(201, {{"id", json::parse(r.body).at("id")}});
    }
    if (path.rfind("/admin/tenants/", 0) == 0 && r.method == "POST") {
      const std::string id = path.substr(15, path.size() - 15 - 5);  // /admin/tenants/{id}/keys
      return send_json(201, {{"key_id", "k1"}, {"api_key", "key-" + id}});
    }
    if (path == "/v1/models") return send_json(200, {{"data", json::array{json::object{{"id", "fake-model"}}}}});
    if (path == "/metrics") {
      if (!with_metrics_) return send_json(404, {{"error", {{"message", "not found"}}}});
      std::string text = "# TYPE kvgate_cost_usd_total counter\n";
      std::lock_guard l(mu_);
      for (const auto& [tenant, n] : served_) {
        text += "kvgate_cost_usd_total{tenant=\"" + tenant + "\"} " + std::to_string(0.001 * n) + "\n";
        text += "kvgate_cost_without_cache_usd_total{tenant=\"" + tenant + "\"} " + std::to_string(0.004 * n) + "\n";
        text += "kvgate_prefix_cache_queries_tokens_total{tenant=\"" + tenant + "\"} " + std::to_string(100 * n) + "\n";
        text += "kvgate_prefix_cache_hits_tokens_total{tenant=\"" + tenant + "\"} " + std::to_string(25 * n) + "\n";
      }
      rep.send(200, {{"Content-Type", "text/plain; version=0.0.4"}}, text);
      return;
    }
    if (path != "/v1/completions") return send_json(404, {{"error", {{"message", "no route"}}}});
    if (auth == "Bearer key-limited")
      return send_json(429, {{"error", {{"message", "rate limit reached for requests"}, {"type", "requests"}}}});
    const json::object body = json::parse(r.body).as_object();
    Stream s{rep, static_cast<int64_t>(body.at("prompt").as_array().size()), body.at("max_tokens").as_int64(),
             auth.substr(11)};  // "Bearer key-" + tenant
    {
      std::lock_guard l(mu_);
      models_.insert(std::string(body.at("model").as_string()));
      keys_.insert(auth.substr(7));
      const int open = ++open_;
      max_open_ = std::max(max_open_.load(), open);
      queue_.push_back(std::move(s));
    }
    cv_.notify_all();
  }

  // Streams each completion from its own thread, a little later, so
  // requests overlap at the server as they would at a real engine.
  void work() {
    for (;;) {
      Stream s;
      {
        std::unique_lock l(mu_);
        cv_.wait(l, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        s = std::move(queue_.front());
        queue_.pop_front();
      }
      std::this_thread::sleep_for(2ms);
      s.reply.start_stream(200, server::sse_headers());
      const bool error_midway = s.max_tokens == 99, cut_midway = s.max_tokens == 98;
      for (int64_t i = 0; i < (error_midway || cut_midway ? 1 : s.max_tokens); ++i)
        s.reply.write(server::sse_data(R"({"choices":[{"text":"x","index":0}],"usage":null})"));
      {
        std::lock_guard l(mu_);
        --open_;
        ++completions_;
        if (!error_midway && !cut_midway) ++served_[s.tenant];
      }
      if (cut_midway) continue;  // the Reply is dropped mid-stream: the connection is cut
      if (error_midway) {
        s.reply.write(server::sse_data(R"({"error":{"message":"the engine stopped","type":"server_error"}})"));
      } else {
        json::object usage{{"prompt_tokens", s.prompt_tokens},
                           {"completion_tokens", s.max_tokens},
                           {"total_tokens", s.prompt_tokens + s.max_tokens},
                           {"prompt_tokens_details", {{"cached_tokens", 16}}},
                           {"kvgate", {{"cost_micros", 7}, {"fresh_prefill_tokens", s.prompt_tokens - 16}}}};
        s.reply.write(server::sse_data(json::serialize(json::object{{"choices", json::array{}}, {"usage", usage}})));
      }
      s.reply.write(std::string(server::kSseDone));
      s.reply.finish();
    }
  }

  kvgate::testing::TempDir dir_;
  bool with_metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Stream> queue_;
  bool stopping_ = false;
  std::set<std::string> models_, keys_;
  std::map<std::string, int> served_;
  int open_ = 0;
  std::atomic<int> max_open_{0};
  std::atomic<int> completions_{0};
  std::thread worker_;
  std::optional<server::Server> server_;
};

SessionOptions session(const FakeOpenAI& s) {
  SessionOptions o;
  o.url = s.url();
  o.tls.ca_file = s.cert();
  o.run.progress_interval_s = 0;
  o.run.timeout = 20s;  // a failure guard, never an expectation
  return o;
}

Workload conversations() {
  SyntheticSpec spec;
  spec.tenants = 2;
  spec.users = 2;
  spec.turns = 3;
  spec.system_prompts = 1;
  spec.system_tokens = 32;
  spec.user_tokens = 8;
  spec.output_tokens = 3;
  return synthetic_workload(spec);
}

TEST(LoadRun, MakesTenantsRunsEveryRequestAndBillsFromMetrics) {
  FakeOpenAI fake;
  SessionOptions o = session(fake);
  o.admin_token = kAdmin;
  o.run.max_concurrency = 3;
  const Workload w = conversations();
  const BenchReport r = run_bench_session(w, o, nullptr);
  EXPECT_EQ(r.completed, 12);
  EXPECT_EQ(r.failed, 0) << (r.failure_examples.empty() ? "" : r.failure_examples[0]);
  EXPECT_EQ(r.output_tokens, 12 * 3);
  EXPECT_EQ(r.itl_ms.count, 12u * 2);  // three chunks per request, two gaps
  EXPECT_EQ(r.ttft_ms.count, 12u);
  EXPECT_EQ(r.cached_tokens, 12 * 16);
  EXPECT_EQ(fake.models_asked(), (std::set<std::string>{"fake-model"}));
  EXPECT_EQ(fake.keys_used(), (std::set<std::string>{"key-bench-0", "key-bench-1"}));
  EXPECT_LE(fake.max_open(), 3);
  EXPECT_EQ(r.peak_in_flight, 3);
  ASSERT_EQ(r.bill.source, "metrics");
  EXPECT_NEAR(*r.bill.cost_usd, 0.012, 1e-9);
  EXPECT_NEAR(*r.bill.cost_without_cache_usd, 0.048, 1e-9);
  ASSERT_TRUE(r.server_hit_rate);
  EXPECT_DOUBLE_EQ(*r.server_hit_rate, 0.25);
}

TEST(LoadRun, ANextTurnGoesOutOnlyAfterThePreviousEnds) {
  FakeOpenAI fake;
  boost::asio::io_context io;
  client::ConnectionPool pool(io, client::make_client_tls({fake.cert(), false}), client::parse_https_url(fake.url()),
                              true);
  const Workload w = conversations();
  RunSettings s;
  s.model = "fake-model";
  s.api_keys = {"key-a", "key-b"};
  s.progress_interval_s = 0;
  s.timeout = 20s;
  const RunResult run = run_load(io, pool, w, s);
  ASSERT_EQ(run.outcomes.size(), w.requests.size());
  int continued = 0;
  for (size_t i = 0; i < w.requests.size(); ++i) {
    const RequestOutcome& o = run.outcomes[i];
    EXPECT_TRUE(o.ok) << o.failure << ": " << o.error;
    EXPECT_EQ(o.index, static_cast<int64_t>(i));
    EXPECT_EQ(o.prompt_tokens_sent, static_cast<int64_t>(w.requests[i].prompt.size()));
    if (w.requests[i].after < 0) continue;
    ++continued;
    EXPECT_GE(o.start_s, run.outcomes[static_cast<size_t>(w.requests[i].after)].end_s);
  }
  EXPECT_EQ(continued, 8);
  // Keep-alive: far fewer connections than requests (at most the peak, 4 first turns at once).
  EXPECT_LE(run.connections_opened, 4);
}

TEST(LoadRun, FailuresAreCountedByKind) {
  FakeOpenAI fake;
  SessionOptions o = session(fake);
  o.api_keys = {"key-ok", "key-limited"};
  Workload w;
  w.name = "custom";
  w.tenants = 2;
  auto add = [&](int32_t tenant, int32_t max_tokens) {
    PlannedRequest p;
    p.tenant = tenant;
    p.prompt = Tokens(20, 5);
    p.max_tokens = max_tokens;
    w.requests.push_back(p);
  };
  add(0, 4);   // fine
  add(1, 4);   // 429
  add(0, 99);  // an error frame after one chunk
  add(0, 98);  // the stream cut after one chunk
  const BenchReport r = run_bench_session(w, o, nullptr);
  EXPECT_EQ(r.completed, 1);
  EXPECT_EQ(r.failed, 3);
  EXPECT_EQ(r.failures.at("http 429"), 1);
  EXPECT_EQ(r.failures.at("error frame"), 1);
  EXPECT_EQ(r.failures.count("connection") + r.failures.count("incomplete stream"), 1u);
  bool saw_message = false;
  for (const std::string& e : r.failure_examples) saw_message |= e == "http 429: rate limit reached for requests";
  EXPECT_TRUE(saw_message);
  // No admin token: no /metrics, so the bill is the usage chunks' own.
  EXPECT_EQ(r.bill.source, "usage");
  EXPECT_NEAR(*r.bill.cost_usd, 7e-6, 1e-12);
  EXPECT_FALSE(r.bill.cost_without_cache_usd);
}

TEST(LoadRun, WithoutMetricsTheBillComesFromUsage) {
  FakeOpenAI fake(/*with_metrics=*/false);
  SessionOptions o = session(fake);
  o.admin_token = kAdmin;
  const BenchReport r = run_bench_session(conversations(), o, nullptr);
  EXPECT_EQ(r.completed, 12);
  EXPECT_EQ(r.bill.source, "usage");
  EXPECT_NEAR(*r.bill.cost_usd, 12 * 7e-6, 1e-12);
  EXPECT_FALSE(r.server_hit_rate);
}

TEST(LoadRun, AnIdleConnectionTheServerClosedIsRetriedOnANewOne) {
  FakeOpenAI fake(true, /*idle_timeout=*/20ms);
  boost::asio::io_context io;
  client::ConnectionPool pool(io, client::make_client_tls({fake.cert(), false}), client::parse_https_url(fake.url()),
                              true);
  Workload w;
  w.tenants = 1;
  PlannedRequest p;
  p.prompt = Tokens(8, 4);
  p.max_tokens = 2;
  w.requests = {p};
  RunSettings s;
  s.model = "fake-model";
  s.api_keys = {"key-ok"};
  s.progress_interval_s = 0;
  s.timeout = 20s;
  ASSERT_TRUE(run_load(io, pool, w, s).outcomes[0].ok);
  ASSERT_EQ(pool.idle(), 1u);
  // The server closes the idle connection; the pool does not know yet.
  ASSERT_TRUE(fake.eventually_no_connections());
  const RunResult again = run_load(io, pool, w, s);
  EXPECT_TRUE(again.outcomes[0].ok) << again.outcomes[0].failure << ": " << again.outcomes[0].error;
  EXPECT_EQ(fake.completions(), 2);
  EXPECT_EQ(pool.opened(), 2);
}

TEST(LoadRun, AWorkloadNeedsAKeyPerTenant) {
  FakeOpenAI fake;
  SessionOptions o = session(fake);
  o.api_keys = {"key-one"};
  EXPECT_THROW(run_bench_session(conversations(), o, nullptr), Error);
}

}  // namespace
}  // namespace kvgate::loadgen
