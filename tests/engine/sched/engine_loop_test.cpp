// The threaded Engine: submissions from several threads, tokens streamed as
// they come, a cancel from another thread, and shutdown with requests in
// flight (every stream finishes; under ASan nothing leaks). Nothing here
// times anything: threads wait on streams, never on clocks.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <cmath>
#include <thread>

#include "cache/tiers/host_tier.h"
#include "engine/sched/engine.h"
#include "base/error.h"
#include "policies/eviction/policy_registry.h"
#include "tests/engine/sched/scheduler_support.h"

namespace kvgate {
namespace {

using namespace kvgate::sched_testing;

std::unique_ptr<Engine> make_engine(const SchedSpec& spec = {}) {
  auto m = stories();
  return std::make_unique<Engine>(make_cpu_backend(m, backend_options(*m, spec)), scheduler_options(*m, spec));
}

TEST(SchedulerEngine, SubmitFromSeveralThreadsAndStreamTheSameTokensAsAlone) {
  const auto reqs = workload(12, 3);
  std::vector<Tokens> want;
  for (const Request& r : reqs) want.push_back(alone(stories(), r));
  auto engine = make_engine({.max_step_tokens = 64});
  std::vector<Tokens> got(reqs.size());
  std::vector<Completion> done(reqs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < reqs.size(); i += 4) {
        auto st = engine->submit(reqs[i], {.tenant = t});
        while (auto tok = st->pop()) got[i].push_back(*tok);
        done[i] = st->wait();
      }
    });
  for (auto& th : threads) th.join();
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << "request " << i;
    EXPECT_EQ(done[i].result.output, want[i]);
    EXPECT_EQ(done[i].result.finish, FinishReason::kLength);
    EXPECT_FALSE(std::isnan(ttft_ms(done[i].timing)));
    EXPECT_GE(e2e_ms(done[i].timing), ttft_ms(done[i].timing));
  }
  EXPECT_GT(engine->steps(), 0);
}

// The operator switches the eviction policy over and over while four
// threads run requests that share prefixes through a pool small enough to
// evict: every output equals the cache-off output, every invariant holds
// at each switch, and every block is back at the end.
TEST(SchedulerEngine, SwitchingTheEvictionPolicyWhileRequestsRunLosesNothing) {
  std::vector<Request> reqs = workload(8, 5);
  for (size_t i = 0; i < 8; ++i) reqs.push_back(reqs[i]);  // each prompt twice: the cache has something to hit
  std::vector<Tokens> want;
  for (const Request& r : reqs) want.push_back(alone(stories(), r));
  auto engine = make_engine({.n_blocks = 24, .max_step_tokens = 64});
  std::atomic<bool> done{false};
  std::atomic<int> switches{0};
  std::thread op([&] {
    const char* specs[] = {"s3fifo", "cost", "fair", "lru", "fair:base=0", "s3fifo:small=0.3"};
    for (size_t i = 0; !done.load(); ++i) {
      auto next = policies::make_eviction_policy(policies::parse_policy_spec(specs[i % std::size(specs)]));
      engine->control([&](Scheduler& s) {
        s.check_invariants();
        s.set_eviction_policy(std::move(next));
        s.check_invariants();
      });
      ++switches;
    }
  });
  std::vector<Tokens> got(reqs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (size_t i = t; i < reqs.size(); i += 4) got[i] = engine->submit(reqs[i], {.tenant = t % 2})->wait().result.output;
    });
  for (auto& th : threads) th.join();
  done = true;
  op.join();
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
  EXPECT_GT(switches.load(), 0);
  EXPECT_EQ(engine->available_blocks(), engine->num_blocks());
}

TEST(SchedulerEngine, CancelFromAnotherThreadEndsTheStream) {
  auto engine = make_engine();
  std::atomic<int> seen{0};
  auto st = engine->submit(greedy(some_tokens(40, 512, 51), 400), {},
                           [&](TokenId t, const Completion*) { if (t >= 0) ++seen; });
  ASSERT_TRUE(st->pop().has_value());  // it is decoding
  std::thread canceller([&] { engine->cancel(st->id()); });
  canceller.join();
  while (st->pop()) {
  }
  const Completion& c = st->wait();
  EXPECT_EQ(c.result.finish, FinishReason::kCancelled);
  EXPECT_LT(c.result.output.size(), 400u);
  EXPECT_EQ(static_cast<size_t>(seen.load()), c.result.output.size());
  // Its blocks are back: full ones cached (evictable), the rest free.
  EXPECT_EQ(engine->available_blocks(), engine->num_blocks());
}

// A backend whose forward pass fails from the n-th call on; `sticky`: and
// then says it can run no more (a device fault).
class FailingBackend final : public Backend {
 public:
  FailingBackend(std::unique_ptr<Backend> inner, int ok_steps, bool sticky = false)
      : inner_(std::move(inner)), ok_(ok_steps), sticky_(sticky) {}
  std::string_view name() const override { return "failing"; }
  const ModelConfig& config() const override { return inner_->config(); }
  KvLayout kv_layout() const override { return inner_->kv_layout(); }
  const KvCapacity& kv_capacity() const override { return inner_->kv_capacity(); }
  void forward(std::span<const SequenceStep> batch, Logits& out) override {
    if (ok_-- <= 0) {
      failed_ = sticky_;
      throw Error("device lost");
    }
    inner_->forward(batch, out);
  }
  std::string failure() const override { return failed_ ? "an illegal memory access" : ""; }
  void copy_block_to_host(BlockId b, std::span<std::byte> dst) const override { inner_->copy_block_to_host(b, dst); }
  void copy_block_from_host(BlockId b, std::span<const std::byte> src) override { inner_->copy_block_from_host(b, src); }

 private:
  std::unique_ptr<Backend> inner_;
  int ok_;
  bool sticky_, failed_ = false;
};

TEST(SchedulerEngine, AFailedStepEndsEveryRequestInFlightWithTheError) {
  auto m = stories();
  Engine engine(std::make_unique<FailingBackend>(make_cpu_backend(m, backend_options(*m, {})), 3),
                scheduler_options(*m, {}));
  auto a = engine.submit(greedy(some_tokens(30, 512, 81), 50), {});
  auto b = engine.submit(greedy(some_tokens(30, 512, 82), 50), {.tenant = 1});
  EXPECT_EQ(a->wait().result.finish, FinishReason::kError);
  EXPECT_EQ(b->wait().result.finish, FinishReason::kError);
  EXPECT_EQ(a->wait().error, "device lost");
  EXPECT_EQ(engine.available_blocks(), engine.num_blocks());
}

// With a host tier, every committed block is copied down holding a device
// reference; when the last request ends the loop collects them, so an idle
// engine has every block back (a client's abort found them held until some
// later request stepped the loop).
TEST(SchedulerEngine, WithAHostTierAnIdleEngineHasEveryBlockBack) {
  auto m = stories();
  const cache::KvIdentity id = prefix_testing::tier_identity_of(*m, 16);
  SchedulerOptions so = scheduler_options(*m, {});
  so.tiers.host = std::make_shared<cache::HostTier>(64 * static_cast<int64_t>(cache::record_bytes(id)), id);
  Engine engine(make_cpu_backend(m, backend_options(*m, {})), std::move(so));
  auto a = engine.submit(greedy(some_tokens(70, 512, 87), 20), {});
  EXPECT_EQ(a->wait().result.finish, FinishReason::kLength);
  EXPECT_EQ(engine.available_blocks(), engine.num_blocks());
}

// A backend that cannot recover (a device fault): the requests in flight
// end with the error, and every later submit is refused as EngineFailed (a
// server's 503), naming the fault.
TEST(SchedulerEngine, AFailedDeviceRefusesNewWork) {
  auto m = stories();
  Engine engine(std::make_unique<FailingBackend>(make_cpu_backend(m, backend_options(*m, {})), 2, true),
                scheduler_options(*m, {}));
  auto a = engine.submit(greedy(some_tokens(30, 512, 85), 50), {});
  EXPECT_EQ(a->wait().result.finish, FinishReason::kError);
  EXPECT_EQ(engine.failure(), "an illegal memory access");
  try {
    engine.submit(greedy(some_tokens(30, 512, 86), 5), {});
    FAIL() << "a failed engine took a request";
  } catch (const EngineFailed& e) {
    EXPECT_NE(std::string(e.what()).find("an illegal memory access"), std::string::npos) << e.what();
  }
}

// Ending the requests after a failed step calls their streams' callbacks;
// one that throws must not take the engine loop (and the process) down, nor
// keep the other streams from finishing.
TEST(SchedulerEngine, ACallbackThatThrowsWhenAFailedStepEndsItDoesNotKillTheLoop) {
  auto m = stories();
  Engine engine(std::make_unique<FailingBackend>(make_cpu_backend(m, backend_options(*m, {})), 2),
                scheduler_options(*m, {}));
  auto bad = engine.submit(greedy(some_tokens(30, 512, 83), 50), {}, [](TokenId, const Completion* done) {
    if (done) throw std::runtime_error("consumer bug");
  });
  auto good = engine.submit(greedy(some_tokens(30, 512, 84), 50), {.tenant = 1});
  EXPECT_EQ(bad->wait().result.finish, FinishReason::kError);
  EXPECT_EQ(good->wait().result.finish, FinishReason::kError);
  EXPECT_EQ(bad->callback_failures(), 1);
  // The loop is alive: it still answers, and every block is back.
  EXPECT_EQ(engine.available_blocks(), engine.num_blocks());
}

// A backend that holds its first forward pass until the test lets it go.
class GatedBackend final : public Backend {
 public:
  explicit GatedBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return "gated"; }
  const ModelConfig& config() const override { return inner_->config(); }
  KvLayout kv_layout() const override { return inner_->kv_layout(); }
  const KvCapacity& kv_capacity() const override { return inner_->kv_capacity(); }
  void forward(std::span<const SequenceStep> batch, Logits& out) override {
    if (!opened_) {
      entered_.set_value();
      gate_.get_future().wait();
      opened_ = true;
    }
    inner_->forward(batch, out);
  }
  void copy_block_to_host(BlockId b, std::span<std::byte> dst) const override { inner_->copy_block_to_host(b, dst); }
  void copy_block_from_host(BlockId b, std::span<const std::byte> src) override { inner_->copy_block_from_host(b, src); }

  std::promise<void> entered_, gate_;

 private:
  std::unique_ptr<Backend> inner_;
  bool opened_ = false;
};

// TTFT counts from when a request reached the engine, not from when the loop
// got round to its inbox: a request submitted while a step runs is stamped
// at submit(). (Clock readings are only ordered here, never measured.)
TEST(SchedulerEngine, ArrivalIsStampedWhenSubmittedNotWhenTheLoopDrainsTheInbox) {
  auto m = stories();
  auto gated = std::make_unique<GatedBackend>(make_cpu_backend(m, backend_options(*m, {})));
  GatedBackend& gate = *gated;
  auto entered = gate.entered_.get_future();
  Engine engine(std::move(gated), scheduler_options(*m, {}));
  auto first = engine.submit(greedy(some_tokens(20, 512, 91), 4), {});
  entered.wait();  // the loop is inside a step
  const SteadyClock::time_point before = SteadyClock::now();
  auto second = engine.submit(greedy(some_tokens(20, 512, 92), 4), {.tenant = 1});
  const SteadyClock::time_point after = SteadyClock::now();
  gate.gate_.set_value();
  const RequestTiming& t = second->wait().timing;
  EXPECT_GE(t.arrival, before);
  EXPECT_LE(t.arrival, after);
  EXPECT_EQ(first->wait().result.finish, FinishReason::kLength);
}

// Observers read what the loop published and never wait for it: stats()
// answers while the loop is held inside a step; once a request's consumer
// is told it finished, the stats hold its lookup and its blocks' release;
// once control() returns, the stats show the change.
TEST(SchedulerEngine, StatsNeverWaitForAStepAndHoldWhatCallersHaveSeen) {
  auto m = stories();
  auto gated = std::make_unique<GatedBackend>(make_cpu_backend(m, backend_options(*m, {})));
  GatedBackend& gate = *gated;
  auto entered = gate.entered_.get_future();
  Engine engine(std::move(gated), scheduler_options(*m, {}));
  const Tokens prompt = some_tokens(40, 512, 141);
  std::promise<cache::CacheStats> at_finish;
  auto stream = engine.submit(greedy(prompt, 4), {}, [&](TokenId, const Completion* done) {
    if (done) at_finish.set_value(engine.stats()->cache);
  });
  entered.wait();  // the loop is inside the first step, and stays there
  EXPECT_EQ(engine.stats()->running, 0) << "published before the step: answered, not waited for";
  gate.gate_.set_value();
  const cache::CacheStats seen = at_finish.get_future().get();
  EXPECT_EQ(seen.all.query_tokens, static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(stream->wait().result.finish, FinishReason::kLength);

  engine.control([](Scheduler& s) {
    s.set_eviction_policy(policies::make_eviction_policy(policies::parse_policy_spec("s3fifo")));
  });
  EXPECT_EQ(engine.stats()->policy, "s3fifo");
  // Idle: the last publication is the loop's final state.
  const std::shared_ptr<const EngineStats> idle = engine.stats();
  EXPECT_EQ(idle->running, 0);
  EXPECT_EQ(idle->cache.blocks_in_use, 0);
}

TEST(SchedulerEngine, SubmitRefusesARequestWithoutACacheScope) {
  auto engine = make_engine();
  Request r = greedy(some_tokens(10, 512, 93), 4);
  r.scope.reset();
  try {
    engine->submit(r, {});
    FAIL() << "a request without a scope was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cache scope"), std::string::npos) << e.what();
  }
}

// A bounded engine refuses what it cannot queue, by a type the server maps
// to 503, and takes requests again once earlier ones finish.
TEST(SchedulerEngine, PastItsBoundSubmitIsRefusedAsBusyAndRecovers) {
  auto m = stories();
  Engine engine(make_cpu_backend(m, backend_options(*m, {})), scheduler_options(*m, {}), {.max_outstanding = 3});
  std::vector<std::shared_ptr<RequestStream>> held;
  for (uint32_t i = 0; i < 3; ++i) held.push_back(engine.submit(greedy(some_tokens(20, 512, 120 + i), 200), {}));
  EXPECT_THROW(engine.submit(greedy(some_tokens(20, 512, 130), 4), {}), EngineBusy);
  EXPECT_EQ(engine.outstanding(), 3);
  engine.cancel(held[0]->id());
  held[0]->wait();
  EXPECT_EQ(engine.outstanding(), 2);
  auto late = engine.submit(greedy(some_tokens(20, 512, 131), 4), {});
  EXPECT_EQ(late->wait().result.finish, FinishReason::kLength);
  for (size_t i = 1; i < held.size(); ++i) engine.cancel(held[i]->id());
  for (auto& h : held) h->wait();
  EXPECT_EQ(engine.outstanding(), 0);
  const cache::CacheStats st = engine.cache_stats();
  EXPECT_EQ(st.blocks_in_use, 0);
  EXPECT_EQ(st.blocks_total, engine.num_blocks());
}

TEST(SchedulerEngine, ShutdownWithRequestsInFlightFinishesEveryStream) {
  auto engine = make_engine({.max_step_tokens = 32});
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (uint32_t i = 0; i < 8; ++i) streams.push_back(engine->submit(greedy(some_tokens(60, 512, 60 + i), 300), {.tenant = i}));
  ASSERT_TRUE(streams[0]->pop().has_value());
  engine->shutdown();
  for (const auto& st : streams) {
    ASSERT_TRUE(st->finished());
    EXPECT_EQ(st->wait().result.finish, FinishReason::kCancelled);
  }
  // After shutdown a submission finishes at once, cancelled.
  auto late = engine->submit(greedy(some_tokens(10, 512, 70), 4), {});
  EXPECT_EQ(late->wait().result.finish, FinishReason::kCancelled);
  EXPECT_THROW(engine->submit(greedy({}, 4), {}), Error);
}

TEST(SchedulerTiming, TpotIsUndefinedForOneTokenAndTheMeanGapOtherwise) {
  RequestTiming t;
  t.arrival = SteadyClock::time_point{};
  t.token_times = {t.arrival + std::chrono::milliseconds(10)};
  EXPECT_DOUBLE_EQ(ttft_ms(t), 10.0);
  EXPECT_TRUE(std::isnan(tpot_ms(t)));
  EXPECT_TRUE(itl_ms(t).empty());
  t.token_times.push_back(t.arrival + std::chrono::milliseconds(14));
  t.token_times.push_back(t.arrival + std::chrono::milliseconds(20));
  t.finished = t.arrival + std::chrono::milliseconds(25);
  EXPECT_DOUBLE_EQ(tpot_ms(t), 5.0);
  EXPECT_EQ(itl_ms(t), (std::vector<double>{4.0, 6.0}));
  EXPECT_DOUBLE_EQ(e2e_ms(t), 25.0);
}

}  // namespace
}  // namespace kvgate
