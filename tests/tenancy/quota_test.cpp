// Quota edges with a hand-driven clock: bursts, refill, exact limits,
// reconciliation, spend caps, concurrency, and many threads at once.
#include "tenancy/quota.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tenancy/error.h"
#include "tenancy/utc_calendar.h"

namespace kvgate::tenancy {
namespace {

constexpr int64_t kSec = 1'000'000'000;
// 2023-11-14T22:13:20Z
constexpr int64_t kStart = 1'700'000'000 * kSec;

TokenUsage fresh_usage(uint64_t prompt, uint64_t output) {
  TokenUsage u;
  u.prompt_tokens = u.fresh_prefill = prompt;
  u.output_tokens = output;
  return u;
}

class QuotaTest : public ::testing::Test {
 protected:
  Tenant tenant(QuotaLimits q, const std::string& id = "acme") {
    Tenant t;
    t.id = id;
    t.plan_id = plan_.id;
    t.quotas = q;
    return t;
  }
  ManualClock clock_{kStart};
  // 1 micro-unit per token in and out: costs are easy to follow.
  PricePlan plan_ = PricePlan::with_default_cached("unit", 1'000'000, 1'000'000);
  Quotas quotas_{clock_};
};

TEST_F(QuotaTest, NoLimitsAdmitsEverything) {
  const Tenant t = tenant({});
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(quotas_.admit(t, plan_, {1'000'000, 1'000'000}).admitted());
  }
  EXPECT_EQ(quotas_.in_flight("acme"), 1000u);
}

TEST_F(QuotaTest, RequestsPerMinuteAllowsABurstThenRefills) {
  QuotaLimits q;
  q.requests_per_minute = 60;
  const Tenant t = tenant(q);
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(quotas_.admit(t, plan_, {10, 10}).admitted()) << i;
  const Admission refused = quotas_.admit(t, plan_, {10, 10});
  ASSERT_FALSE(refused.admitted());
  const Refusal& r = refused.refusal();
  EXPECT_EQ(r.limit, Limit::kRequestsPerMinute);
  EXPECT_EQ(r.limit_value, 60u);
  EXPECT_EQ(r.remaining, 0u);
  EXPECT_EQ(r.retry_after_s, 1u) << "one request refills per second";
  EXPECT_EQ(r.reset_s, 60u);
  EXPECT_FALSE(r.never_fits);
  EXPECT_NE(r.message.find("requests"), std::string::npos) << r.message;

  clock_.advance_ns(kSec - 1);  // not quite a whole request yet
  EXPECT_FALSE(quotas_.admit(t, plan_, {10, 10}).admitted());
  clock_.advance_ns(1);
  EXPECT_TRUE(quotas_.admit(t, plan_, {10, 10}).admitted());
  EXPECT_FALSE(quotas_.admit(t, plan_, {10, 10}).admitted());

  clock_.advance_s(3600);  // refill caps at the burst size
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(quotas_.admit(t, plan_, {10, 10}).admitted());
  EXPECT_FALSE(quotas_.admit(t, plan_, {10, 10}).admitted());
}

// A request takes its one request as it arrives, before its body is read:
// admitted later, it is not taken twice; refused later (or never admitted
// at all: a 400 after the parse), it stays taken.
TEST_F(QuotaTest, ArrivalTakesTheRequestOnceBeforeTheBodyIsRead) {
  QuotaLimits q;
  q.requests_per_minute = 3;
  q.max_concurrent_requests = 1;
  const Tenant t = tenant(q);
  ASSERT_FALSE(quotas_.arrive(t));
  const Admission a = quotas_.admit(t, plan_, {10, 10, /*arrived=*/true});
  ASSERT_TRUE(a.admitted());
  const std::optional<Refusal> busy = quotas_.arrive(t);
  ASSERT_TRUE(busy) << "the one slot is taken: refused before any parse";
  EXPECT_EQ(busy->limit, Limit::kConcurrentRequests);
  quotas_.settle(a.ticket(), TokenUsage{});
  EXPECT_FALSE(quotas_.arrive(t)) << "the second request: then its body fails a check, never admitted";
  EXPECT_FALSE(quotas_.arrive(t)) << "the third";
  const std::optional<Refusal> over = quotas_.arrive(t);
  ASSERT_TRUE(over) << "3 arrivals took all 3 requests, admitted or not";
  EXPECT_EQ(over->limit, Limit::kRequestsPerMinute);
  EXPECT_EQ(over->retry_after_s, 20u);
  clock_.advance_s(20);
  ASSERT_FALSE(quotas_.arrive(t));
  const Admission b = quotas_.admit(t, plan_, {10, 10, /*arrived=*/true});
  EXPECT_TRUE(b.admitted()) << "an arrived request is not refused for the request it already took";
  quotas_.withdraw(b.ticket());
  EXPECT_FALSE(quotas_.arrive(t)) << "a withdrawn one (its engine was full) gives its request back";
}

TEST_F(QuotaTest, TokensPerMinuteExactLimit) {
  QuotaLimits q;
  q.tokens_per_minute = 1000;
  const Tenant t = tenant(q);
  EXPECT_TRUE(quotas_.admit(t, plan_, {600, 400}).admitted()) << "exactly the limit fits";
  const Admission a = quotas_.admit(t, plan_, {1, 0});
  ASSERT_FALSE(a.admitted());
  EXPECT_EQ(a.refusal().limit, Limit::kTokensPerMinute);
  EXPECT_EQ(a.refusal().remaining, 0u);
  EXPECT_EQ(a.refusal().retry_after_s, 1u);  // 1000/min: 1 token in 60 ms -> 1 s rounded up
  EXPECT_EQ(a.refusal().reset_s, 60u);

  clock_.advance_s(30);  // half refilled
  EXPECT_EQ(quotas_.rate_status(t).tokens.remaining, 500u);
  EXPECT_FALSE(quotas_.admit(t, plan_, {501, 0}).admitted());
  EXPECT_TRUE(quotas_.admit(t, plan_, {500, 0}).admitted());
}

TEST_F(QuotaTest, RequestLargerThanTheBucketNeverFits) {
  QuotaLimits q;
  q.tokens_per_minute = 1000;
  const Admission a = quotas_.admit(tenant(q), plan_, {900, 101});
  ASSERT_FALSE(a.admitted());
  EXPECT_EQ(a.refusal().limit, Limit::kTokensPerMinute);
  EXPECT_TRUE(a.refusal().never_fits);
  EXPECT_EQ(a.refusal().remaining, 1000u) << "a refusal charges nothing";
}

TEST_F(QuotaTest, SettleRefundsAnOverestimate) {
  QuotaLimits q;
  q.tokens_per_minute = 1000;
  const Tenant t = tenant(q);
  const Admission a = quotas_.admit(t, plan_, {200, 800});  // estimate 1000
  ASSERT_TRUE(a.admitted());
  EXPECT_EQ(quotas_.rate_status(t).tokens.remaining, 0u);
  // Only 100 output tokens were produced: 300 used, 700 come back.
  EXPECT_EQ(quotas_.settle(a.ticket(), fresh_usage(200, 100)), 300u);
  EXPECT_EQ(quotas_.rate_status(t).tokens.remaining, 700u);
  EXPECT_TRUE(quotas_.admit(t, plan_, {700, 0}).admitted());
  EXPECT_FALSE(quotas_.admit(t, plan_, {1, 0}).admitted());
}

TEST_F(QuotaTest, SettleChargesAnUnderestimateAsDebt) {
  QuotaLimits q;
  q.tokens_per_minute = 600;  // 10 tokens per second
  const Tenant t = tenant(q);
  const Admission a = quotas_.admit(t, plan_, {100, 100});
  ASSERT_TRUE(a.admitted());
  // The usage came out at 800 (say the gateway's estimate was wrong): 600
  // more than reserved, 200 more than the bucket had.
  quotas_.settle(a.ticket(), fresh_usage(400, 400));
  EXPECT_EQ(quotas_.rate_status(t).tokens.remaining, 0u);
  const Admission b = quotas_.admit(t, plan_, {10, 0});
  ASSERT_FALSE(b.admitted());
  EXPECT_EQ(b.refusal().retry_after_s, 21u) << "pay 200 debt + 10 tokens at 10/s";
  clock_.advance_s(21);
  EXPECT_TRUE(quotas_.admit(t, plan_, {10, 0}).admitted());
}

TEST_F(QuotaTest, CachedTokensCountWithTheConfiguredWeight) {
  TokenUsage u;
  u.cached_device = 1000;
  u.cached_disk = 1000;
  u.fresh_prefill = 100;
  u.prompt_tokens = 2100;
  u.output_tokens = 50;
  EXPECT_EQ(Quotas::counted_tokens(u, 0), 150u) << "default: cached tokens are free";
  EXPECT_EQ(Quotas::counted_tokens(u, 250), 650u);
  EXPECT_EQ(Quotas::counted_tokens(u, 1000), 2150u);

  QuotaLimits q;
  q.tokens_per_minute = 3000;
  q.cached_token_weight_permille = 500;
  const Tenant t = tenant(q);
  const Admission a = quotas_.admit(t, plan_, {2100, 900});  // estimate 3000
  ASSERT_TRUE(a.admitted());
  quotas_.settle(a.ticket(), u);  // counts 100 + 1000 + 50 = 1150
  EXPECT_EQ(quotas_.rate_status(t).tokens.remaining, 1850u);
}

TEST_F(QuotaTest, ConcurrentRequestsAreCappedAndFreedBySettle) {
  QuotaLimits q;
  q.max_concurrent_requests = 2;
  const Tenant t = tenant(q);
  const Admission a = quotas_.admit(t, plan_, {1, 1});
  const Admission b = quotas_.admit(t, plan_, {1, 1});
  ASSERT_TRUE(a.admitted() && b.admitted());
  const Admission c = quotas_.admit(t, plan_, {1, 1});
  ASSERT_FALSE(c.admitted());
  EXPECT_EQ(c.refusal().limit, Limit::kConcurrentRequests);
  quotas_.settle(a.ticket(), TokenUsage{});
  EXPECT_TRUE(quotas_.admit(t, plan_, {1, 1}).admitted());
  EXPECT_THROW(quotas_.settle(a.ticket(), TokenUsage{}), Error) << "a ticket settles once";
  EXPECT_EQ(quotas_.in_flight("acme"), 2u);
}

// A request the server admitted but could not serve (its engine was full,
// a 503) costs the tenant nothing: not its slot, its tokens, nor its place
// in the requests/minute budget.
TEST_F(QuotaTest, AWithdrawnTicketGivesEverythingBack) {
  QuotaLimits q;
  q.requests_per_minute = 2;
  q.tokens_per_minute = 100;
  q.max_concurrent_requests = 1;
  const Tenant t = tenant(q);
  for (int i = 0; i < 5; ++i) {
    const Admission a = quotas_.admit(t, plan_, {40, 40});
    ASSERT_TRUE(a.admitted()) << i;
    quotas_.withdraw(a.ticket());
  }
  EXPECT_EQ(quotas_.in_flight("acme"), 0u);
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 0u);
  EXPECT_TRUE(quotas_.admit(t, plan_, {40, 40}).admitted());
  const Admission second_slot = quotas_.admit(t, plan_, {1, 1});
  ASSERT_FALSE(second_slot.admitted());  // the one slot is taken again: withdraw did not leak slots either
  EXPECT_EQ(second_slot.refusal().limit, Limit::kConcurrentRequests);
}

TEST_F(QuotaTest, TenantsNeverShareLimits) {
  QuotaLimits q;
  q.requests_per_minute = 1;
  ASSERT_TRUE(quotas_.admit(tenant(q, "a"), plan_, {1, 1}).admitted());
  EXPECT_FALSE(quotas_.admit(tenant(q, "a"), plan_, {1, 1}).admitted());
  EXPECT_TRUE(quotas_.admit(tenant(q, "b"), plan_, {1, 1}).admitted());
}

TEST_F(QuotaTest, RefusalReportsTheLongestWait) {
  QuotaLimits q;
  q.requests_per_minute = 1;
  q.tokens_per_minute = 60;
  const Tenant t = tenant(q);
  ASSERT_TRUE(quotas_.admit(t, plan_, {60, 0}).admitted());
  // Both limits are hit: tokens clear in 30 s, the next request in 60 s.
  const Admission a = quotas_.admit(t, plan_, {30, 0});
  ASSERT_FALSE(a.admitted());
  EXPECT_EQ(a.refusal().limit, Limit::kRequestsPerMinute);
  EXPECT_EQ(a.refusal().retry_after_s, 60u);
  // A limit that can never be met wins over any wait.
  const Admission b = quotas_.admit(t, plan_, {61, 0});
  ASSERT_FALSE(b.admitted());
  EXPECT_EQ(b.refusal().limit, Limit::kTokensPerMinute);
  EXPECT_TRUE(b.refusal().never_fits);
}

TEST_F(QuotaTest, MonthlySpendCapReservesThenSettles) {
  QuotaLimits q;
  q.monthly_spend_cap_micros = 1000;
  const Tenant t = tenant(q);
  // Worst case 600 reserved; a second worst case of 600 would overshoot.
  const Admission a = quotas_.admit(t, plan_, {100, 500});
  ASSERT_TRUE(a.admitted());
  EXPECT_EQ(a.ticket().reserved_cost_micros, 600u);
  const Admission b = quotas_.admit(t, plan_, {100, 500});
  ASSERT_FALSE(b.admitted());
  EXPECT_EQ(b.refusal().limit, Limit::kMonthlySpend);
  EXPECT_EQ(b.refusal().remaining, 400u);
  const int64_t to_next_month = (utc_next_month_start_ns(kStart) - kStart + kSec - 1) / kSec;
  EXPECT_EQ(b.refusal().retry_after_s, static_cast<uint64_t>(to_next_month));
  // The first request really cost 150: 850 left.
  EXPECT_EQ(quotas_.settle(a.ticket(), fresh_usage(100, 50)), 150u);
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 150u);
  const Admission c = quotas_.admit(t, plan_, {350, 500});  // exactly 850
  ASSERT_TRUE(c.admitted());
  quotas_.settle(c.ticket(), fresh_usage(350, 500));
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 1000u);
  EXPECT_FALSE(quotas_.admit(t, plan_, {1, 0}).admitted()) << "cap reached exactly";
  // A new UTC month starts from zero.
  clock_.set_ns(utc_next_month_start_ns(kStart));
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 0u);
  EXPECT_TRUE(quotas_.admit(t, plan_, {1, 0}).admitted());
}

TEST_F(QuotaTest, PendingSpendIsHeldUntilCommittedOrCancelled) {
  QuotaLimits q;
  q.monthly_spend_cap_micros = 1000;
  const Tenant t = tenant(q);
  const Admission a = quotas_.admit(t, plan_, {100, 500});  // reserves 600
  ASSERT_TRUE(a.admitted());
  const PendingSpend p = quotas_.settle_pending(a.ticket(), fresh_usage(100, 50));
  EXPECT_EQ(p.cost_micros, 150u);
  EXPECT_EQ(p.tenant_id, "acme");
  EXPECT_EQ(quotas_.in_flight("acme"), 0u) << "the slot is free at once";
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 0u) << "not spent until committed";
  // The real cost, not the estimate, stays held: 850 left, not 1000 or 400.
  const Admission over = quotas_.admit(t, plan_, {351, 500});
  ASSERT_FALSE(over.admitted());
  EXPECT_EQ(over.refusal().remaining, 850u);
  quotas_.cancel_spend(p);
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 0u);
  const Admission all = quotas_.admit(t, plan_, {500, 500});  // the whole cap again
  ASSERT_TRUE(all.admitted());
  const PendingSpend spent = quotas_.settle_pending(all.ticket(), fresh_usage(400, 0));
  quotas_.commit_spend(spent);
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 400u);
  EXPECT_TRUE(quotas_.admit(t, plan_, {300, 300}).admitted()) << "exactly the 600 left";
  EXPECT_FALSE(quotas_.admit(t, plan_, {1, 0}).admitted());
  EXPECT_THROW(quotas_.settle_pending(all.ticket(), TokenUsage{}), Error) << "settles once";
}

TEST_F(QuotaTest, PendingSpendOfAnUnpriceableRequestHoldsNothing) {
  QuotaLimits q;
  q.monthly_spend_cap_micros = 1000;
  const Tenant t = tenant(q);
  const Admission a = quotas_.admit(t, plan_, {10, 10});
  ASSERT_TRUE(a.admitted());
  try {
    quotas_.settle_pending(a.ticket(), fresh_usage(1, UINT64_MAX));  // 2^64 micros
    FAIL() << "priced an overflowing cost";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOverflow);
  }
  EXPECT_EQ(quotas_.in_flight("acme"), 0u);
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 0u);
  EXPECT_TRUE(quotas_.admit(t, plan_, {500, 500}).admitted()) << "the whole cap is free";
}

TEST_F(QuotaTest, SpendCapRemembersEarlierProcessesThroughTheSpendSource) {
  int64_t asked_from = 0;
  Quotas q2(clock_, [&](const std::string& tenant_id, int64_t from, int64_t to) -> uint64_t {
    EXPECT_EQ(tenant_id, "acme");
    EXPECT_EQ(to, utc_next_month_start_ns(kStart));
    asked_from = from;
    return 990;
  });
  QuotaLimits q;
  q.monthly_spend_cap_micros = 1000;
  const Tenant t = tenant(q);
  EXPECT_TRUE(q2.admit(t, plan_, {5, 5}).admitted());
  EXPECT_EQ(asked_from, utc_month_start_ns(kStart));
  const Admission a = q2.admit(t, plan_, {1, 0});
  ASSERT_FALSE(a.admitted());
  EXPECT_EQ(a.refusal().remaining, 0u);
}

TEST_F(QuotaTest, LimitChangesTakeEffectOnTheNextAdmission) {
  QuotaLimits q;
  q.requests_per_minute = 100;
  Tenant t = tenant(q);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(quotas_.admit(t, plan_, {1, 1}).admitted());
  t.quotas.requests_per_minute = 5;  // lowered below what is left: clamped
  EXPECT_EQ(quotas_.rate_status(t).requests.remaining, 5u);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(quotas_.admit(t, plan_, {1, 1}).admitted());
  EXPECT_FALSE(quotas_.admit(t, plan_, {1, 1}).admitted());
  t.quotas.requests_per_minute = 0;  // lifted
  EXPECT_TRUE(quotas_.admit(t, plan_, {1, 1}).admitted());
}

TEST_F(QuotaTest, KvBlockCapIsQueryableAndChecked) {
  QuotaLimits q;
  EXPECT_EQ(kv_block_limit(q), 0u);
  EXPECT_FALSE(check_kv_blocks(q, 1'000'000, 1'000'000).has_value()) << "0 = unlimited";
  q.max_cached_kv_blocks = 100;
  EXPECT_EQ(kv_block_limit(q), 100u);
  EXPECT_FALSE(check_kv_blocks(q, 90, 10).has_value());
  const std::optional<Refusal> r = check_kv_blocks(q, 90, 11);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->limit, Limit::kKvBlocks);
  EXPECT_EQ(r->remaining, 10u);
  EXPECT_FALSE(r->never_fits);
  EXPECT_TRUE(check_kv_blocks(q, 0, 101)->never_fits);
  EXPECT_TRUE(check_kv_blocks(q, UINT64_MAX, UINT64_MAX).has_value()) << "no wrap";
}

TEST_F(QuotaTest, ConcurrentAdmissionsNeverOverAdmit) {
  QuotaLimits q;
  q.requests_per_minute = 500;
  q.tokens_per_minute = 100'000;
  q.max_concurrent_requests = 300;
  const Tenant t = tenant(q);
  constexpr int kThreads = 16;
  constexpr int kTries = 100;
  std::atomic<int> admitted{0};
  std::atomic<uint64_t> tokens{0};
  std::vector<Ticket> tickets[kThreads];
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < kTries; ++j) {
        const uint64_t prompt = 100 + static_cast<uint64_t>((i * 31 + j * 7) % 400);
        const Admission a = quotas_.admit(t, plan_, {prompt, 0});
        if (a.admitted()) {
          admitted.fetch_add(1);
          tokens.fetch_add(prompt);
          tickets[i].push_back(a.ticket());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  // Time never moves, so nothing refills: every limit is a hard ceiling.
  EXPECT_LE(admitted.load(), 300);
  EXPECT_LE(tokens.load(), 100'000u);
  EXPECT_EQ(quotas_.in_flight("acme"), static_cast<uint64_t>(admitted.load()));
  // The tightest limit must actually have been reached.
  EXPECT_TRUE(admitted.load() == 300 || tokens.load() + 500 > 100'000u);

  // Settling from many threads returns every slot.
  threads.clear();
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (const Ticket& tk : tickets[i]) quotas_.settle(tk, TokenUsage{});
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(quotas_.in_flight("acme"), 0u);
}

TEST_F(QuotaTest, ConcurrentSpendNeverOvershootsTheCap) {
  QuotaLimits q;
  q.monthly_spend_cap_micros = 10'000;
  const Tenant t = tenant(q);
  std::atomic<uint64_t> reserved{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 200; ++j) {
        const Admission a = quotas_.admit(t, plan_, {7, 0});
        if (!a.admitted()) continue;
        reserved.fetch_add(a.ticket().reserved_cost_micros);
        quotas_.settle(a.ticket(), fresh_usage(7, 0));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_LE(quotas_.month_spend_micros("acme"), 10'000u);
  EXPECT_EQ(quotas_.month_spend_micros("acme"), 10'000u / 7 * 7);
  EXPECT_EQ(reserved.load(), 10'000u / 7 * 7);
}

TEST(TokenBucket, ExactIntegerRefillWithoutDrift) {
  TokenBucket b(7, 0);  // 7 per minute: a token every 8.571... s
  ASSERT_TRUE(b.try_take(7, 0));
  // After exactly one minute, in 1 ns steps or one jump, exactly 7 are back.
  for (int i = 1; i <= 60; ++i) b.available(int64_t{i} * kSec);
  EXPECT_EQ(b.available(60 * kSec), 7u);
  EXPECT_FALSE(b.ns_until(8, 60 * kSec).has_value());
  EXPECT_EQ(b.ns_until(7, 60 * kSec), 0);
}

TEST(TokenBucket, HugeCapacityAndHugeTimesDoNotOverflow) {
  TokenBucket b(UINT64_MAX, 0);
  EXPECT_EQ(b.available(0), UINT64_MAX);
  ASSERT_TRUE(b.try_take(UINT64_MAX, 0));
  b.take_anyway(UINT64_MAX, 0);
  b.take_anyway(UINT64_MAX, 0);
  EXPECT_EQ(b.available(0), 0u);
  EXPECT_FALSE(b.try_take(0, 0)) << "nothing is admitted while in debt";
  b.give_back(UINT64_MAX, 0);
  b.give_back(UINT64_MAX, 0);  // debt paid
  EXPECT_EQ(b.available(0), 0u);
  b.give_back(UINT64_MAX, 0);
  EXPECT_EQ(b.available(0), UINT64_MAX);
  ASSERT_TRUE(b.try_take(UINT64_MAX, 0));
  EXPECT_EQ(b.available(INT64_MAX), UINT64_MAX) << "centuries later: full, not wrapped";

  TokenBucket small(10, INT64_MIN);
  ASSERT_TRUE(small.try_take(10, INT64_MIN));
  EXPECT_EQ(small.available(INT64_MAX), 10u) << "the whole int64 range elapsed";

  TokenBucket back(10, 100 * kSec);
  ASSERT_TRUE(back.try_take(10, 100 * kSec));
  EXPECT_EQ(back.available(0), 0u) << "time going backwards refills nothing";
}

}  // namespace
}  // namespace kvgate::tenancy
