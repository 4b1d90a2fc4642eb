// Cancellation returns every block; one tenant's flood does not hold back
// another tenant's request; the cached-prefix preference orders a tenant's
// queue. Bounds are in steps.
#include <gtest/gtest.h>

#include "tests/engine/sched/scheduler_support.h"

namespace kvgate {
namespace {

using namespace kvgate::sched_testing;

TEST(SchedulerCancel, MidPrefillReturnsThePoolToItsStartingFreeCount) {
  auto s = make_scheduler(stories(), {.max_step_tokens = 16});
  const int32_t start = s->pool().available();
  auto a = s->submit(greedy(some_tokens(100, 512, 31), 8), {});
  auto queued = s->submit(greedy(some_tokens(30, 512, 32), 8), {});
  s->step();
  s->step();  // a is 32 tokens into its 100-token prompt
  EXPECT_LT(s->pool().available(), start);
  EXPECT_TRUE(a->try_pop() == std::nullopt);
  EXPECT_TRUE(s->cancel(a->id()));
  EXPECT_TRUE(s->cancel(queued->id()));
  EXPECT_FALSE(s->cancel(a->id()));
  s->check_invariants();
  EXPECT_TRUE(s->idle());
  EXPECT_EQ(s->pool().available(), start);
  EXPECT_EQ(a->wait().result.finish, FinishReason::kCancelled);
  EXPECT_TRUE(a->wait().result.output.empty());
  EXPECT_EQ(queued->wait().result.finish, FinishReason::kCancelled);
  EXPECT_EQ(queued->wait().result.fresh_prefill_tokens, 30);
}

TEST(SchedulerCancel, MidDecodeReturnsThePoolToItsStartingFreeCount) {
  auto s = make_scheduler(stories(), {.max_step_tokens = 64});
  const int32_t start = s->pool().available();
  auto a = s->submit(greedy(some_tokens(40, 512, 33), 50), {});
  auto b = s->submit(greedy(some_tokens(40, 512, 34), 50), {.tenant = 1});
  size_t streamed = 0;
  while (streamed < 5) {
    s->step();
    while (a->try_pop()) ++streamed;
  }
  EXPECT_TRUE(s->cancel(a->id()));
  EXPECT_TRUE(s->cancel(b->id()));
  s->check_invariants();
  EXPECT_EQ(s->pool().available(), start);
  const Completion& c = a->wait();
  EXPECT_EQ(c.result.finish, FinishReason::kCancelled);
  EXPECT_GE(c.result.output.size(), 5u);
  EXPECT_EQ(c.result.output.size(), c.timing.token_times.size());
}

TEST(SchedulerCancel, APreemptedRequestCancelledWhileWaitingHoldsNothing) {
  auto s = make_scheduler(stories(), {.n_blocks = 12, .max_step_tokens = 256});
  const int32_t start = s->pool().available();
  auto low = s->submit(greedy(some_tokens(60, 512, 21), 40), {.tenant = 1, .priority = 0});
  auto high = s->submit(greedy(some_tokens(60, 512, 22), 40), {.tenant = 2, .priority = 5});
  while (s->preemptions() == 0) {
    s->step();
    s->check_invariants();
  }
  EXPECT_EQ(s->waiting(), 1u);  // the low-priority one, requeued
  EXPECT_TRUE(s->cancel(low->id()));
  EXPECT_TRUE(s->cancel(high->id()));
  s->check_invariants();
  EXPECT_EQ(s->pool().available(), start);
  EXPECT_EQ(low->wait().result.finish, FinishReason::kCancelled);
  EXPECT_EQ(low->wait().result.preemptions, 1);
  EXPECT_EQ(low->wait().result.prompt_tokens, low->wait().result.cached_tokens + low->wait().result.fresh_prefill_tokens);
}

TEST(SchedulerFairness, AFloodingTenantDoesNotDelayAnotherTenantsRequest) {
  // 8 running at most; tenant 1 queues 200 requests of 16 + 8 tokens.
  auto s = make_scheduler(stories(), {.max_step_tokens = 64, .max_running = 8});
  std::vector<std::shared_ptr<RequestStream>> flood;
  for (uint32_t i = 0; i < 200; ++i) flood.push_back(s->submit(greedy(some_tokens(16, 512, 100 + i), 8), {.tenant = 1}));
  for (int i = 0; i < 5; ++i) s->step();  // the flood is running and queued
  auto other = s->submit(greedy(some_tokens(16, 512, 99), 8), {.tenant = 2});
  while (!other->finished()) {
    s->step();
    s->check_invariants();
  }
  const RequestTiming& t = other->wait().timing;
  // It waits for at most one running request to finish (<= 8 decode steps
  // plus its prefill step), is admitted next, and then runs its 8 tokens.
  EXPECT_LE(t.admitted_step - t.arrival_step, 10);
  EXPECT_LE(t.finished_step - t.arrival_step, 18);
  // FCFS would have served all 200 first: most of the flood still waits.
  EXPECT_GT(s->waiting(), 150u);
  s->cancel_all();
  EXPECT_EQ(s->pool().available(), s->pool().num_blocks());
  for (const auto& f : flood) EXPECT_TRUE(f->finished());
}

TEST(SchedulerFairness, PreferCachedPrefixAdmitsTheWarmRequestFirst) {
  auto s = make_scheduler(stories(), {.max_running = 1, .prefer_cached_prefix = true});
  const Tokens shared = some_tokens(64, 512, 41);
  auto warmup = s->submit(greedy(shared, 2), {});
  drain(*s);
  auto blocker = s->submit(greedy(some_tokens(20, 512, 42), 4), {});
  s->step();  // the blocker holds the one slot
  auto cold = s->submit(greedy(some_tokens(70, 512, 43), 2), {});
  Tokens warm_prompt = shared;
  warm_prompt.push_back(7);
  auto warm = s->submit(greedy(warm_prompt, 2), {});
  drain(*s);
  EXPECT_LT(warm->wait().timing.admitted_step, cold->wait().timing.admitted_step);
  EXPECT_EQ(warm->wait().result.cached_tokens, 64);
}

TEST(SchedulerFairness, WithoutThePreferenceATenantIsFcfs) {
  auto s = make_scheduler(stories(), {.max_running = 1});
  const Tokens shared = some_tokens(64, 512, 41);
  s->submit(greedy(shared, 2), {});
  drain(*s);
  s->submit(greedy(some_tokens(20, 512, 42), 4), {});
  s->step();
  auto cold = s->submit(greedy(some_tokens(70, 512, 43), 2), {});
  Tokens warm_prompt = shared;
  warm_prompt.push_back(7);
  auto warm = s->submit(greedy(warm_prompt, 2), {});
  drain(*s);
  EXPECT_GT(warm->wait().timing.admitted_step, cold->wait().timing.admitted_step);
}

}  // namespace
}  // namespace kvgate
