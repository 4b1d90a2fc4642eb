// Pins and the cache quota through the scheduler: a request's pinned prompt
// survives pressure until its TTL (on a clock the test moves, never a
// wait), a pin that would exceed the tenant's cache quota, its pin quota or
// the server-wide cap on pins is refused (so a pin flood never stalls
// another tenant's admission), a tenant at its quota evicts its own blocks
// first, and none of it changes a single output token.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>

#include "tests/engine/sched/prefix_support.h"

namespace kvgate {
namespace {

using namespace std::chrono_literals;
using prefix_testing::greedy;
using prefix_testing::make_prefix_scheduler;
using prefix_testing::run_one;
using prefix_testing::stories;

constexpr cache::ScopeId kScopeA{1, 1}, kScopeB{2, 2};
constexpr TenantId kA = 1, kB = 2;

Tokens prompt_of(int32_t n, int32_t salt) {
  Tokens t;
  for (int32_t i = 0; i < n; ++i) t.push_back(1 + (i * 7 + salt * 131) % 500);
  return t;
}

struct PinFixture : ::testing::Test {
  SteadyClock::time_point now{};
  std::unique_ptr<Scheduler> make(int32_t n_blocks, int32_t tenant_pinned_percent = 10) {
    prefix_testing::PrefixSpec spec;
    spec.n_blocks = n_blocks;
    spec.tenant_pinned_percent = tenant_pinned_percent;
    spec.clock = [this] { return now; };
    return make_prefix_scheduler(stories(), spec);
  }
  // Another tenant's distinct prompts, enough to turn the whole pool over.
  void flood(Scheduler& s, int32_t rounds) {
    for (int32_t i = 0; i < rounds; ++i) run_one(s, greedy(prompt_of(40, 1000 + i), 2, kScopeB), {kB});
  }
};

TEST_F(PinFixture, APinnedPromptSurvivesPressureUntilItsTtlThenBecomesEvictable) {
  auto s = make(16, /*tenant_pinned_percent=*/50);  // room for its 3 blocks
  Request pinned = greedy(prompt_of(50, 1), 4, kScopeA);  // 3 full blocks of 16
  pinned.pins = {{static_cast<int32_t>(pinned.prompt.size()), 300s}};
  const RequestResult first = run_one(*s, pinned, {kA});
  EXPECT_EQ(first.pinned_tokens, 48);
  EXPECT_FALSE(first.pin_refused);
  EXPECT_GE(first.cache_written_tokens, 48) << "a pin is billed as a cache write";
  EXPECT_EQ(s->pool().pinned_blocks(kA), 3);

  flood(*s, 12);
  now += 299s;
  const RequestResult warm = run_one(*s, greedy(prompt_of(50, 1), 4, kScopeA), {kA});
  EXPECT_EQ(warm.cached_tokens, 48) << "pressure could not take the pinned blocks";
  EXPECT_EQ(warm.output, first.output);

  now += 300s;  // the hit at 299 s refreshed the pin to 599 s; now 599 s
  flood(*s, 12);
  const RequestResult cold = run_one(*s, greedy(prompt_of(50, 1), 4, kScopeA), {kA});
  EXPECT_EQ(s->pool().pinned_blocks(kA), 0) << "expired at its TTL";
  EXPECT_EQ(cold.cached_tokens, 0) << "after the TTL the blocks were ordinary, and pressure took them";
  EXPECT_EQ(cold.output, first.output);
}

// Two breakpoints: the first two blocks for an hour, the prompt's five for
// five minutes. Each block keeps the longest ttl of the spans it is in.
TEST_F(PinFixture, EachSpanKeepsItsOwnTtl) {
  auto s = make(24, /*tenant_pinned_percent=*/50);
  Request pinned = greedy(prompt_of(84, 5), 4, kScopeA);  // 5 full blocks of 16
  pinned.pins = {{32, 3600s}, {84, 300s}};
  const RequestResult first = run_one(*s, pinned, {kA});
  EXPECT_EQ(first.pinned_tokens, 80);
  EXPECT_EQ(s->pool().pinned_blocks(kA), 5);

  now += 301s;
  flood(*s, 16);
  const RequestResult after_5m = run_one(*s, greedy(prompt_of(84, 5), 4, kScopeA), {kA});
  EXPECT_EQ(after_5m.cached_tokens, 32) << "the hour's two blocks outlived the five minutes' three";
  EXPECT_EQ(after_5m.output, first.output);

  now += 3601s;
  flood(*s, 16);
  const RequestResult after_1h = run_one(*s, greedy(prompt_of(84, 5), 4, kScopeA), {kA});
  EXPECT_EQ(s->pool().pinned_blocks(kA), 0);
  EXPECT_EQ(after_1h.cached_tokens, 0);
  EXPECT_EQ(after_1h.output, first.output);
}

TEST_F(PinFixture, APinOverTheTenantsCacheQuotaIsRefusedAndBillsNoWrite) {
  auto s = make(32);
  Request r = greedy(prompt_of(50, 2), 2, kScopeA);
  r.pins = {{static_cast<int32_t>(r.prompt.size()), 300s}};
  const RequestResult refused = run_one(*s, r, {kA, 0, /*cache_quota_blocks=*/2});
  EXPECT_TRUE(refused.pin_refused);
  EXPECT_EQ(refused.pinned_tokens, 0);
  EXPECT_LE(refused.cache_written_tokens, 32) << "only the blocks the quota let it cache, no pin";
  EXPECT_EQ(s->pool().pinned_blocks(kA), 0);

  Request again = greedy(prompt_of(50, 3), 2, kScopeA);
  again.pins = {{static_cast<int32_t>(again.prompt.size()), 300s}};
  const RequestResult ok = run_one(*s, again, {kA, 0, /*cache_quota_blocks=*/3});
  EXPECT_FALSE(ok.pin_refused);
  EXPECT_EQ(ok.pinned_tokens, 48);
  // A second pin of three more blocks does not fit beside the first.
  Request third = greedy(prompt_of(50, 4), 2, kScopeA);
  third.pins = {{static_cast<int32_t>(third.prompt.size()), 300s}};
  EXPECT_TRUE(run_one(*s, third, {kA, 0, 3}).pin_refused);
}

// Submits `req` and steps at most `max_steps` times: the result if it
// finished, none if it was still waiting or running (a stall).
std::optional<RequestResult> run_bounded(Scheduler& s, Request req, Submitter who, int64_t max_steps = 2000) {
  auto st = s.submit(std::move(req), who);
  for (int64_t i = 0; i < max_steps && !st->finished(); ++i) {
    s.step();
    s.check_invariants();
  }
  if (!st->finished()) return std::nullopt;
  return st->wait().result;
}

// A pin flood: distinct prompts of 3 full blocks each (4 blocks while they
// run), pinned one after another into a pool of 32.
TEST_F(PinFixture, OneTenantsPinFloodStopsAtItsDefaultPinQuotaAndAnotherTenantIsServed) {
  auto s = make(32);
  const int32_t tenant_default = 3;  // SchedulerOptions::tenant_pinned_percent's 10% of 32
  int32_t pinned = 0, refused = 0;
  for (int32_t i = 0; i < 10; ++i) {
    Request r = greedy(prompt_of(48, 200 + i), 2, kScopeA);
    r.pins = {{static_cast<int32_t>(r.prompt.size()), 3600s}};
    const std::optional<RequestResult> res = run_bounded(*s, r, {kA});  // no quota of its own
    ASSERT_TRUE(res) << "the flooding tenant's own request " << i << " stalled";
    res->pin_refused ? ++refused : ++pinned;
    EXPECT_LE(s->pool().pinned_blocks(kA), tenant_default) << "after pin " << i;
  }
  EXPECT_EQ(pinned, 1);
  EXPECT_EQ(refused, 9);
  const std::optional<RequestResult> other = run_bounded(*s, greedy(prompt_of(200, 7), 8, kScopeB), {kB});
  ASSERT_TRUE(other) << "another tenant's request was never admitted";
  EXPECT_EQ(other->finish, FinishReason::kLength);
}

TEST_F(PinFixture, PinsOfManyTenantsStopAtTheServerCapAndAnotherTenantIsStillServed) {
  auto s = make(32);
  const int32_t cap = 16;  // SchedulerOptions::max_pinned_percent's 50% of 32
  int32_t refused = 0;
  for (TenantId t = 10; t < 20; ++t) {  // each within its own default pin quota of 3 blocks
    Request r = greedy(prompt_of(48, 300 + t), 2, cache::ScopeId{static_cast<uint64_t>(t), 7});
    r.pins = {{static_cast<int32_t>(r.prompt.size()), 3600s}};
    const std::optional<RequestResult> res = run_bounded(*s, r, {t});
    ASSERT_TRUE(res) << "tenant " << t << "'s request stalled";
    if (res->pin_refused) ++refused;
    EXPECT_LE(s->pool().pinned_blocks(), cap) << "after tenant " << t;
  }
  EXPECT_EQ(s->pool().pinned_blocks(), 15) << "five pins of three blocks: as much as the cap holds";
  EXPECT_EQ(refused, 5);
  // A quiet tenant's request that needs the whole unpinned part of the pool.
  const std::optional<RequestResult> other = run_bounded(*s, greedy(prompt_of(200, 8), 40, kScopeB), {kB});
  ASSERT_TRUE(other) << "another tenant's request was never admitted";
  EXPECT_EQ(other->output.size(), 40u);
}

TEST_F(PinFixture, ATenantsOwnPinQuotaReplacesTheDefaultButNotTheServerCap) {
  auto s = make(32);
  EXPECT_EQ(s->max_pinned_blocks(), 16);
  EXPECT_EQ(s->tenant_pinned_blocks(), 3);
  int32_t pins = 0;
  for (int32_t i = 0; i < 8; ++i) {
    Request r = greedy(prompt_of(48, 400 + i), 2, kScopeA);
    r.pins = {{static_cast<int32_t>(r.prompt.size()), 300s}};
    Submitter who{kA};
    who.pin_quota_blocks = 1000;  // the operator's quota for this tenant: more than the cap
    const std::optional<RequestResult> res = run_bounded(*s, r, who);
    ASSERT_TRUE(res);
    if (!res->pin_refused) ++pins;
  }
  EXPECT_EQ(pins, 5) << "past its default quota, up to the server's cap and no further";
  EXPECT_EQ(s->pool().pinned_blocks(kA), 15);
}

TEST_F(PinFixture, ATenantAtItsCacheQuotaEvictsItsOwnBlocksFirst) {
  auto s = make(64);
  run_one(*s, greedy(prompt_of(64, 5), 2, kScopeB), {kB});  // the quiet tenant's 4 blocks
  for (int32_t i = 0; i < 6; ++i) {
    run_one(*s, greedy(prompt_of(40, 10 + i), 2, kScopeA), {kA, 0, /*cache_quota_blocks=*/3});
    EXPECT_LE(s->pool().cached_blocks(kA), 3);
  }
  EXPECT_EQ(s->pool().cached_blocks(kB), 4) << "the other tenant lost nothing to A's churn";
  EXPECT_EQ(run_one(*s, greedy(prompt_of(64, 5), 2, kScopeB), {kB}).cached_tokens, 63);
}

TEST_F(PinFixture, PinsAndQuotasNeverChangeTheOutput) {
  auto cached = make(16, /*tenant_pinned_percent=*/50);
  prefix_testing::PrefixSpec off;
  off.prefix_cache = false;
  auto plain = make_prefix_scheduler(stories(), off);
  for (int32_t i = 0; i < 8; ++i) {
    Request r = greedy(prompt_of(50 + i, i % 3), 6, kScopeA);
    if (i % 2) r.pins = {{static_cast<int32_t>(r.prompt.size()), 300s}};
    const RequestResult a = run_one(*cached, r, {kA, 0, 4});
    const RequestResult b = run_one(*plain, greedy(prompt_of(50 + i, i % 3), 6, kScopeA), {kA});
    EXPECT_EQ(a.output, b.output) << "request " << i;
    now += 100s;
  }
}

}  // namespace
}  // namespace kvgate
