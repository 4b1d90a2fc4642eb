// Continuous batching: many requests at once give each one's greedy output
// alone, with chunked prefill on and off, and under a pool so small that
// sequences are preempted and recomputed. Steps are counted, never timed.
#include <gtest/gtest.h>

#include <cstdio>

#include "base/error.h"
#include "tests/engine/sched/scheduler_support.h"

namespace kvgate {
namespace {

using namespace kvgate::sched_testing;

std::vector<Tokens> alone_outputs(const std::vector<Request>& reqs) {
  std::vector<Tokens> out;
  for (const Request& r : reqs) out.push_back(alone(stories(), r));
  return out;
}

// What the steps of a run batched, from their StepReports.
struct BatchSeen {
  int32_t max_decode = 0;       // the most sequences one step decoded together
  int32_t steps_at_max = 0;     // how many steps decoded that many
  int64_t steps = 0;
};

// Submits every request, steps until idle (checking invariants), and checks
// each output against `want`; `seen` gets what the steps batched.
void expect_same_outputs(Scheduler& s, const std::vector<Request>& reqs, const std::vector<Tokens>& want,
                         BatchSeen& seen) {
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (size_t i = 0; i < reqs.size(); ++i) streams.push_back(s.submit(reqs[i], {.tenant = i % 3}));
  seen = {};
  while (!s.idle() && seen.steps < 100000) {
    const StepReport r = s.step();
    s.check_invariants();
    ++seen.steps;
    if (r.decode_tokens > seen.max_decode) seen.max_decode = r.decode_tokens, seen.steps_at_max = 0;
    seen.steps_at_max += r.decode_tokens == seen.max_decode;
  }
  EXPECT_TRUE(s.idle());
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

void expect_same_outputs(Scheduler& s, const std::vector<Request>& reqs, const std::vector<Tokens>& want) {
  BatchSeen seen;
  expect_same_outputs(s, reqs, want, seen);
}

// 32 requests decode in the same steps: the claim is checked on the
// StepReports, not assumed. The workload's outputs (6..16 tokens) end before
// the last of ~1,800 prompt tokens is admitted at 96 per step, so each
// request gets 40 more; the pool holds all 32 at their longest (prompt <= 96
// plus output <= 56: 10 blocks each) so none is preempted. 32 decode rows
// also take the backend's sgemm path (16 rows or more).
TEST(SchedulerBatching, ThirtyTwoConcurrentRequestsMatchEachRunAlone) {
  constexpr int32_t kConcurrent = 32;
  auto reqs = workload(kConcurrent, 1);
  for (Request& r : reqs) r.max_tokens += 40;
  const auto want = alone_outputs(reqs);
  const int32_t n_blocks = kConcurrent * 10 + 8;
  for (const bool chunked : {true, false}) {
    SCOPED_TRACE(chunked ? "chunked" : "unchunked");
    auto s = make_scheduler(stories(), {.n_blocks = n_blocks, .max_step_tokens = 96, .chunked = chunked});
    BatchSeen seen;
    expect_same_outputs(*s, reqs, want, seen);
    EXPECT_EQ(seen.max_decode, kConcurrent) << "no step decoded all " << kConcurrent << " requests at once";
    EXPECT_GT(seen.steps_at_max, 0);
    EXPECT_EQ(s->preemptions(), 0);
    std::printf("[ %s: %d of %lld steps decoded all %d requests together ]\n", chunked ? "chunked" : "unchunked",
                seen.steps_at_max, static_cast<long long>(seen.steps), kConcurrent);
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
