// Continuous batching: many requests at once give each one's greedy output
// alone, with chunked prefill on and off, and under a pool so small that
// sequences are preempted and recomputed. Steps are counted, never timed.
#include <gtest/gtest.h>

#include "engine/error.h"
#include "tests/engine/sched/scheduler_support.h"

namespace kvgate {
namespace {

using namespace kvgate::sched_testing;

std::vector<Tokens> alone_outputs(const std::vector<Request>& reqs) {
  std::vector<Tokens> out;
  for (const Request& r : reqs) out.push_back(alone(stories(), r));
  return out;
}

void expect_same_outputs(Scheduler& s, const std::vector<Request>& reqs, const std::vector<Tokens>& want) {
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (size_t i = 0; i < reqs.size(); ++i) streams.push_back(s.submit(reqs[i], {.tenant = i % 3}));
  drain(s);
  for (size_t i = 0; i < reqs.size(); ++i) {
    ASSERT_TRUE(streams[i]->finished());
    const Completion& c = streams[i]->wait();
    EXPECT_EQ(c.result.finish, FinishReason::kLength);
    EXPECT_EQ(c.result.output, want[i]) << "request " << i;
    EXPECT_EQ(c.result.prompt_tokens, c.result.cached_tokens + c.result.fresh_prefill_tokens);
    EXPECT_EQ(c.timing.token_times.size(), c.result.output.size());
    // Every token was streamed, in order.
    Tokens streamed;
    while (auto t = streams[i]->try_pop()) streamed.push_back(*t);
    EXPECT_EQ(streamed, c.result.output);
  }
  EXPECT_EQ(s.pool().available(), s.pool().num_blocks());
}

TEST(SchedulerBatching, ThirtyTwoConcurrentRequestsMatchEachRunAlone) {
  const auto reqs = workload(32, 1);
  const auto want = alone_outputs(reqs);
  {
    auto s = make_scheduler(stories(), {.max_step_tokens = 96});
    expect_same_outputs(*s, reqs, want);
    EXPECT_EQ(s->preemptions(), 0);
  }
  {
    auto s = make_scheduler(stories(), {.max_step_tokens = 96, .chunked = false});
    expect_same_outputs(*s, reqs, want);
  }
}

TEST(SchedulerBatching, ChunkedPrefillKeepsEveryStepUnderTheBudget) {
  auto s = make_scheduler(stories(), {.max_step_tokens = 24});
  auto a = s->submit(greedy(some_tokens(100, 512, 7), 10), {});
  auto b = s->submit(greedy(some_tokens(90, 512, 8), 10), {});
  int32_t steps_with_prefill_and_decode = 0;
  while (!s->idle()) {
    const StepReport r = s->step();
    EXPECT_LE(r.decode_tokens + r.prefill_tokens, 24);
    if (r.decode_tokens > 0 && r.prefill_tokens > 0) ++steps_with_prefill_and_decode;
    s->check_invariants();
  }
  // b's prompt was chunked into steps that also decoded a.
  EXPECT_GT(steps_with_prefill_and_decode, 0);
  EXPECT_EQ(a->wait().result.output, alone(stories(), greedy(some_tokens(100, 512, 7), 10)));
  EXPECT_EQ(b->wait().result.output, alone(stories(), greedy(some_tokens(90, 512, 8), 10)));
}

TEST(SchedulerBatching, PreemptionUnderASmallPoolStillCompletesEveryRequestUnchanged) {
  const auto reqs = workload(16, 2);
  const auto want = alone_outputs(reqs);
  // 16 requests of up to ~9 blocks each; the pool holds 24.
  auto s = make_scheduler(stories(), {.n_blocks = 24, .max_step_tokens = 128});
  expect_same_outputs(*s, reqs, want);
  EXPECT_GT(s->preemptions(), 0);
}

TEST(SchedulerBatching, PreemptsTheLowestPriorityFirst) {
  auto s = make_scheduler(stories(), {.n_blocks = 12, .max_step_tokens = 256});
  auto low = s->submit(greedy(some_tokens(60, 512, 21), 40), {.tenant = 1, .priority = 0});
  auto high = s->submit(greedy(some_tokens(60, 512, 22), 40), {.tenant = 2, .priority = 5});
  drain(*s);
  EXPECT_GT(low->wait().result.preemptions, 0);
  EXPECT_EQ(high->wait().result.preemptions, 0);
  EXPECT_EQ(low->wait().result.output, alone(stories(), greedy(some_tokens(60, 512, 21), 40)));
  EXPECT_EQ(high->wait().result.output, alone(stories(), greedy(some_tokens(60, 512, 22), 40)));
}

TEST(SchedulerBatching, RejectsWhatCanNeverRun) {
  auto s = make_scheduler(stories(), {.n_blocks = 4});
  EXPECT_THROW(s->submit(greedy({}, 4), {}), Error);
  EXPECT_THROW(s->submit(greedy(some_tokens(100, 512, 1), 4), {}), Error);  // 7 blocks > 4
  EXPECT_TRUE(s->idle());
}

}  // namespace
}  // namespace kvgate
