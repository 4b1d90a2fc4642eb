// The synthetic workload's shape: tenants x users x turns requests, each
// turn extending the previous one's prompt and answer, system prompts
// shared the way the flags say, turns ordered by their conversations, and
// the ideal hit rate that shape implies.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "base/error.h"
#include "gateway/tools/loadgen/arrivals.h"
#include "gateway/tools/loadgen/synthetic_workload.h"

namespace kvgate::loadgen {
namespace {

bool starts_with(const Tokens& a, const Tokens& prefix) {
  return a.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), a.begin());
}

SyntheticSpec small() {
  SyntheticSpec s;
  s.tenants = 2;
  s.system_prompts = 2;
  s.system_tokens = 64;
  s.users = 3;
  s.turns = 3;
  s.user_tokens = 8;
  s.output_tokens = 4;
  return s;
}

TEST(SyntheticWorkload, OneRequestPerTenantUserAndTurn) {
  const Workload w = synthetic_workload(small());
  EXPECT_EQ(w.requests.size(), 2u * 3 * 3);
  EXPECT_EQ(w.tenants, 2);
  for (const PlannedRequest& p : w.requests) EXPECT_EQ(p.max_tokens, 4);
}

TEST(SyntheticWorkload, EachTurnExtendsThePreviousPromptAndAnswer) {
  const SyntheticSpec s = small();
  const Workload w = synthetic_workload(s);
  int continued = 0;
  for (size_t i = 0; i < w.requests.size(); ++i) {
    const PlannedRequest& p = w.requests[i];
    if (p.after < 0) {
      EXPECT_EQ(p.prompt.size(), static_cast<size_t>(s.system_tokens + s.user_tokens));
      continue;
    }
    ++continued;
    ASSERT_LT(p.after, static_cast<int64_t>(i));  // the earlier turn is planned first
    const PlannedRequest& prev = w.requests[static_cast<size_t>(p.after)];
    EXPECT_EQ(prev.tenant, p.tenant);
    EXPECT_TRUE(starts_with(p.prompt, prev.prompt));
    EXPECT_EQ(p.prompt.size(), prev.prompt.size() + s.output_tokens + s.user_tokens);
  }
  EXPECT_EQ(continued, 2 * 3 * 2);
}

TEST(SyntheticWorkload, SystemPromptsAreSharedByIndexAcrossUsersAndTenants) {
  const SyntheticSpec s = small();
  const Workload w = synthetic_workload(s);
  // First turns: the system prompt is the first system_tokens ids.
  std::map<Tokens, int> distinct;
  for (const PlannedRequest& p : w.requests)
    if (p.after < 0) ++distinct[Tokens(p.prompt.begin(), p.prompt.begin() + s.system_tokens)];
  ASSERT_EQ(distinct.size(), 2u);  // two system prompts, the same ids for both tenants
  for (const auto& [prompt, users] : distinct) EXPECT_EQ(users == 4 || users == 2, true) << users;
  // Users' own messages differ: no two first turns are the same prompt.
  std::map<Tokens, int> firsts;
  for (const PlannedRequest& p : w.requests)
    if (p.after < 0) ++firsts[p.prompt];
  EXPECT_EQ(firsts.size(), 6u);
}

TEST(SyntheticWorkload, ArrivalsArePoissonAtTheRateAndDeterministic) {
  SyntheticSpec s = small();
  s.users = 50;
  s.turns = 4;
  s.request_rate = 8;
  const Workload a = synthetic_workload(s), b = synthetic_workload(s);
  ASSERT_EQ(a.requests.size(), 400u);
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].arrival_s, b.requests[i].arrival_s);
    EXPECT_EQ(a.requests[i].prompt, b.requests[i].prompt);
    if (i) {
      EXPECT_GE(a.requests[i].arrival_s, a.requests[i - 1].arrival_s);
    }
  }
  EXPECT_EQ(a.requests[0].arrival_s, 0.0);
  // 399 gaps of mean 1/8 s: the span is 49.9 s give or take a few sigma (2.5 s).
  EXPECT_NEAR(a.requests.back().arrival_s, 399.0 / 8, 10.0);
  s.seed = 1;
  EXPECT_NE(synthetic_workload(s).requests[1].arrival_s, a.requests[1].arrival_s);
}

TEST(SyntheticWorkload, AnInfiniteRateSendsAllAtOnce) {
  for (const PlannedRequest& p : synthetic_workload(small()).requests) EXPECT_EQ(p.arrival_s, 0.0);
  EXPECT_THROW(poisson_arrivals(3, 0, 0), Error);
  EXPECT_THROW(poisson_arrivals(3, -1, 0), Error);
}

TEST(SyntheticWorkload, IdealHitsAreOneColdCopyPerTenantAndPrompt) {
  SyntheticSpec s;
  s.tenants = 2;
  s.system_prompts = 1;
  s.system_tokens = 64;  // 4 blocks of 16
  s.users = 2;
  s.turns = 1;
  s.user_tokens = 16;
  s.output_tokens = 1;
  const Workload w = synthetic_workload(s);
  const IdealCache ideal = ideal_cache(w, 16);
  // 4 requests of 80 tokens; per tenant the second user hits the 64-token system prompt.
  EXPECT_EQ(ideal.prompt_tokens, 320);
  EXPECT_EQ(ideal.cached_tokens, 2 * 64);
}

TEST(IdealCache, AWholePromptHitStillPrefillsItsLastToken) {
  Workload w;
  PlannedRequest p;
  p.prompt = Tokens(32, 5);
  w.requests = {p, p};
  const IdealCache ideal = ideal_cache(w, 16);
  EXPECT_EQ(ideal.cached_tokens, 31);
  // A different tenant does not hit.
  w.requests[1].tenant = 1;
  EXPECT_EQ(ideal_cache(w, 16).cached_tokens, 0);
}

TEST(IdealCache, OnlyTheLongestRunOfWholeBlocksCounts) {
  Workload w;
  PlannedRequest a, b;
  a.prompt = Tokens(40, 1);  // blocks [1..] x2 + 8 spare
  b.prompt = Tokens(40, 1);
  b.prompt[20] = 2;  // differs in block 1: only block 0 hits
  w.requests = {a, b};
  EXPECT_EQ(ideal_cache(w, 16).cached_tokens, 16);
}

TEST(SyntheticWorkload, OutOfRangeValuesAreNamed) {
  SyntheticSpec s = small();
  s.turns = 0;
  try {
    synthetic_workload(s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--turns must be at least 1 (got 0)");
  }
}

}  // namespace
}  // namespace kvgate::loadgen
