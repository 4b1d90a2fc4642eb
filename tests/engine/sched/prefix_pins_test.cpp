// Pins and the cache quota through the scheduler: a request's pinned prompt
// survives pressure until its TTL (on a clock the test moves, never a
// wait), a pin that would exceed the tenant's cache quota is refused, a
// tenant at its quota evicts its own blocks first, and none of it changes
// a single output token.
#include <gtest/gtest.h>

#include <chrono>

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
  std::unique_ptr<Scheduler> make(int32_t n_blocks) {
    prefix_testing::PrefixSpec spec;
    spec.n_blocks = n_blocks;
    spec.clock = [this] { return now; };
    return make_prefix_scheduler(stories(), spec);
  }
  // Another tenant's distinct prompts, enough to turn the whole pool over.
  void flood(Scheduler& s, int32_t rounds) {
    for (int32_t i = 0; i < rounds; ++i) run_one(s, greedy(prompt_of(40, 1000 + i), 2, kScopeB), {kB});
  }
};

TEST_F(PinFixture, APinnedPromptSurvivesPressureUntilItsTtlThenBecomesEvictable) {
  auto s = make(16);
  Request pinned = greedy(prompt_of(50, 1), 4, kScopeA);  // 3 full blocks of 16
  pinned.pin_ttl = 300s;
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

TEST_F(PinFixture, APinOverTheTenantsCacheQuotaIsRefusedAndBillsNoWrite) {
  auto s = make(32);
  Request r = greedy(prompt_of(50, 2), 2, kScopeA);
  r.pin_ttl = 300s;
  const RequestResult refused = run_one(*s, r, {kA, 0, /*cache_quota_blocks=*/2});
  EXPECT_TRUE(refused.pin_refused);
  EXPECT_EQ(refused.pinned_tokens, 0);
  EXPECT_LE(refused.cache_written_tokens, 32) << "only the blocks the quota let it cache, no pin";
  EXPECT_EQ(s->pool().pinned_blocks(kA), 0);

  Request again = greedy(prompt_of(50, 3), 2, kScopeA);
  again.pin_ttl = 300s;
  const RequestResult ok = run_one(*s, again, {kA, 0, /*cache_quota_blocks=*/3});
  EXPECT_FALSE(ok.pin_refused);
  EXPECT_EQ(ok.pinned_tokens, 48);
  // A second pin of three more blocks does not fit beside the first.
  Request third = greedy(prompt_of(50, 4), 2, kScopeA);
  third.pin_ttl = 300s;
  EXPECT_TRUE(run_one(*s, third, {kA, 0, 3}).pin_refused);
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
  auto cached = make(16);
  prefix_testing::PrefixSpec off;
  off.prefix_cache = false;
  auto plain = make_prefix_scheduler(stories(), off);
  for (int32_t i = 0; i < 8; ++i) {
    Request r = greedy(prompt_of(50 + i, i % 3), 6, kScopeA);
    r.pin_ttl = i % 2 ? 300s : 0s;
    const RequestResult a = run_one(*cached, r, {kA, 0, 4});
    const RequestResult b = run_one(*plain, greedy(prompt_of(50 + i, i % 3), 6, kScopeA), {kA});
    EXPECT_EQ(a.output, b.output) << "request " << i;
    now += 100s;
  }
}

}  // namespace
}  // namespace kvgate
