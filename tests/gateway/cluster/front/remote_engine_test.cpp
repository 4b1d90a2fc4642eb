// The front's EngineClient against real replicas in-process: each an Engine on
// stories260K behind its InternalApi on gateway/server/'s Server (real TLS,
// the self-signed certificates trusted through one bundle), reached through
// a ReplicaSet. Checked: the replica's tokens and accounting come back
// (prompt = cached + fresh, a repeat cached), the placement is told; a
// cancel ends the request at the replica and still brings its accounting;
// a request placed on a replica that died unnoticed runs on the other
// (retried before its first token, the dead one out of rotation); a replica
// that dies mid-stream ends the request with an error naming it, billed for
// the tokens delivered. Nothing is timed: waits are bounded only so a
// failure cannot hang.
#include "gateway/cluster/front/remote_engine.h"

#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "engine/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "engine/model/model_fingerprint.h"
#include "engine/sched/engine.h"
#include "engine/sched/tier_identity.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/cluster/front/replica_set.h"
#include "gateway/server/server.h"
#include "gateway/cluster/replica/internal_api.h"
#include "tests/engine/test_models.h"
#include "tests/gateway/server/server_fixture.h"
#include "tests/temp_dir.h"

namespace kvgate::front {
namespace {

using namespace std::chrono_literals;
using server::testing::eventually;
using server::testing::kWait;

const std::string kToken = "0123456789abcdef0123456789abcdef-front";

// One replica: an engine, its internal routes, a TLS server on 127.0.0.1.
struct Replica {
  explicit Replica(const std::shared_ptr<const Model>& model, const Tokenizer& tok) {
    BackendOptions bo;
    bo.kv_budget_bytes = kv_budget_for_blocks(model->config(), KvType::kF32, bo.block_size, 256);
    auto backend = make_cpu_backend(model, bo);
    SchedulerOptions so;
    so.model = model_fingerprint(*model, backend->kv_layout());
    so.prefix_cache = true;
    so.eos = tok.eos();
    identity = tier_identity(*backend, so.model);
    engine = std::make_unique<Engine>(std::move(backend), std::move(so), EngineOptions{});
    api = std::make_unique<replica::InternalApi>(*engine, wire::InternalToken(kToken), "stories260K", identity,
                                                 std::string());
    server::ServerOptions o;
    o.address = "127.0.0.1";
    o.https_port = 0;
    o.tls.self_signed_dir = dir.path() / "tls";
    o.close_linger = 100ms;
    http = std::make_unique<server::Server>(o, [this](server::HttpRequest r, server::Reply reply) {
      (*api)(r, reply);
    });
    http->start();
    url = "https://127.0.0.1:" + std::to_string(*http->https_port());
  }
  ~Replica() { stop(); }
  void stop() {
    if (http) http->stop(0ms);
    http.reset();
    if (engine) engine->shutdown();
  }
  std::string cert() const {
    std::ifstream in(dir.path() / "tls" / "self-signed.crt");
    return {std::istreambuf_iterator<char>(in), {}};
  }

  kvgate::testing::TempDir dir;
  cache::KvIdentity identity;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<replica::InternalApi> api;
  std::unique_ptr<server::Server> http;
  std::string url;
};

// What a request's callback saw.
struct Seen {
  Mutex mu;
  CondVar cv;
  Tokens tokens ABSL_GUARDED_BY(mu);
  std::optional<Completion> done ABSL_GUARDED_BY(mu);
  std::vector<std::string> placed ABSL_GUARDED_BY(mu);

  RequestStream::Callback callback() {
    return [this](TokenId t, const Completion* c) {
      MutexLock lock(mu);
      if (c) done = *c;
      else tokens.push_back(t);
      cv.notify_all();
    };
  }
  EngineClient::OnPlaced on_placed() {
    return [this](RequestId, std::string_view where) {
      MutexLock lock(mu);
      placed.emplace_back(where);
    };
  }
  bool wait_tokens(size_t n) {
    return eventually([&] {
      MutexLock lock(mu);
      return tokens.size() >= n || done.has_value();
    });
  }
  Completion wait_done() {
    EXPECT_TRUE(eventually([&] {
      MutexLock lock(mu);
      return done.has_value();
    }));
    MutexLock lock(mu);
    return done.value_or(Completion{});
  }
};

class RemoteEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = kvgate::testing::stories();
    tok_ = Tokenizer::from_gguf(model_->file());
  }
  void TearDown() override {
    remote_.reset();
    set_.reset();
    replicas_.clear();
  }

  void start(int n, const std::string& policy, std::chrono::milliseconds health = 50ms) {
    for (int i = 0; i < n; ++i) replicas_.push_back(std::make_unique<Replica>(model_, *tok_));
    std::ofstream bundle(dir_.path() / "replicas.pem");
    ReplicaSetOptions o;
    for (const auto& r : replicas_) {
      bundle << r->cert();
      o.urls.push_back(r->url);
    }
    bundle.close();
    o.ca_file = (dir_.path() / "replicas.pem").string();
    o.token = kToken;
    o.health_interval = health;
    o.mine = replicas_[0]->identity;
    o.route_policy = policy;
    set_ = std::make_unique<ReplicaSet>(std::move(o));
    ASSERT_TRUE(eventually([&] {
      for (const ReplicaView& v : set_->snapshot())
        if (!v.up) return false;
      return true;
    })) << "every replica registers";
    identity_ = replicas_[0]->identity;
    RequestBounds b;
    b.context_length = model_->config().context_length;
    b.vocab_size = tok_->n_vocab();
    b.block_size = identity_->block_size;
    b.pool_blocks = 1 << 30;
    remote_ = std::make_unique<RemoteEngine>(*set_, identity_, b);
  }

  Request request(const std::string& text, int32_t max_tokens) {
    Request r;
    r.prompt = tok_->encode(text, {.add_bos = true, .parse_special = false});
    r.sampling.temperature = 0;
    r.max_tokens = max_tokens;
    r.ignore_eos = true;
    r.scope = cache::ScopeId{3, 4};
    return r;
  }

  const ReplicaView& view(const std::vector<ReplicaView>& all, const std::string& url) {
    for (const ReplicaView& v : all)
      if (v.url == url) return v;
    throw std::runtime_error("no replica " + url);
  }

  kvgate::testing::TempDir dir_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Tokenizer> tok_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<ReplicaSet> set_;
  std::optional<cache::KvIdentity> identity_;
  std::unique_ptr<RemoteEngine> remote_;
};

const std::string kStory =
    "Once upon a time there was a little girl named Lily who loved to play in the park with her friends every "
    "single day after school, and one day she found a shiny red ball under the big old tree near the river";

TEST_F(RemoteEngineTest, TheReplicasTokensAndAccountingComeBack) {
  start(1, "cache_aware");
  const Request r = request(kStory, 12);
  Seen first;
  remote_->start(r, {.tenant = 5}, first.callback(), first.on_placed());
  const Completion a = first.wait_done();
  EXPECT_EQ(a.result.finish, FinishReason::kLength) << a.error;
  EXPECT_EQ(a.result.output.size(), 12u);
  EXPECT_EQ(a.result.prompt_tokens, static_cast<int32_t>(r.prompt.size()));
  EXPECT_EQ(a.result.prompt_tokens, a.result.cached_tokens + a.result.fresh_prefill_tokens);
  EXPECT_GE(a.timing.admitted_step, 0);
  {
    MutexLock lock(first.mu);
    EXPECT_EQ(first.tokens, a.result.output);
    EXPECT_EQ(first.placed, std::vector<std::string>{replicas_[0]->url});
  }
  // The same prompt again: cached at the replica, the same greedy tokens.
  Seen second;
  remote_->start(r, {.tenant = 5}, second.callback(), second.on_placed());
  const Completion b = second.wait_done();
  EXPECT_GT(b.result.cached_tokens, 0);
  EXPECT_EQ(b.result.prompt_tokens, b.result.cached_tokens + b.result.fresh_prefill_tokens);
  EXPECT_EQ(b.result.output, a.result.output);
  EXPECT_EQ(view(set_->snapshot(), replicas_[0]->url).load_tokens, 0) << "the load goes when the request ends";
}

TEST_F(RemoteEngineTest, ACancelEndsTheRequestAtTheReplicaAndKeepsItsAccounting) {
  start(1, "cache_aware");
  const Request r = request(kStory, 1500);
  Seen seen;
  const RequestId id = remote_->start(r, {.tenant = 5}, seen.callback(), seen.on_placed());
  ASSERT_TRUE(seen.wait_tokens(3));
  remote_->cancel(id);
  const Completion c = seen.wait_done();
  EXPECT_EQ(c.result.finish, FinishReason::kCancelled) << c.error;
  EXPECT_LT(c.result.output.size(), 1500u);
  // The replica's own accounting, not a stand-in: its done line arrived.
  EXPECT_EQ(c.result.prompt_tokens, static_cast<int32_t>(r.prompt.size()));
  EXPECT_EQ(c.result.prompt_tokens, c.result.cached_tokens + c.result.fresh_prefill_tokens);
  EXPECT_GT(c.result.cache_written_tokens, 0);
  EXPECT_TRUE(eventually([&] { return replicas_[0]->engine->outstanding() == 0; }));
}

TEST_F(RemoteEngineTest, ARequestPlacedOnAReplicaThatDiedUnnoticedRunsOnTheOther) {
  start(2, "round_robin", 60s);  // no health check will notice in this test
  replicas_[0]->stop();
  for (int i = 0; i < 4; ++i) {
    Seen seen;
    remote_->start(request(kStory + " " + std::to_string(i), 4), {.tenant = 5}, seen.callback(), seen.on_placed());
    const Completion c = seen.wait_done();
    EXPECT_EQ(c.result.finish, FinishReason::kLength) << c.error;
    MutexLock lock(seen.mu);
    EXPECT_EQ(seen.placed.back(), replicas_[1]->url) << "told where it moved";
  }
  const auto all = set_->snapshot();
  EXPECT_GE(view(all, replicas_[0]->url).retries_from, 1);
  EXPECT_FALSE(view(all, replicas_[0]->url).up);
  EXPECT_TRUE(view(all, replicas_[1]->url).up);
}

TEST_F(RemoteEngineTest, AReplicaThatDiesMidStreamEndsTheRequestWithAnError) {
  start(1, "cache_aware", 60s);
  const Request r = request(kStory, 1500);
  Seen seen;
  remote_->start(r, {.tenant = 5}, seen.callback(), seen.on_placed());
  ASSERT_TRUE(seen.wait_tokens(2));
  replicas_[0]->http->stop(0ms);  // the connection drops under the stream
  const Completion c = seen.wait_done();
  EXPECT_EQ(c.result.finish, FinishReason::kError);
  EXPECT_NE(c.error.find(replicas_[0]->url), std::string::npos) << c.error;
  ASSERT_FALSE(c.result.output.empty());
  // Billed for what was delivered, the prompt as fresh prefill.
  EXPECT_EQ(c.result.prompt_tokens, static_cast<int32_t>(r.prompt.size()));
  EXPECT_EQ(c.result.fresh_prefill_tokens, c.result.prompt_tokens);
  EXPECT_GE(c.timing.admitted_step, 0);
  EXPECT_EQ(view(set_->snapshot(), replicas_[0]->url).stream_errors, 1);
}

}  // namespace
}  // namespace kvgate::front
