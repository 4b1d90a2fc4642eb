#include "policies/admission/fair_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace kvgate::policies {
namespace {

QueuedRequest req(RequestId id, TenantId tenant, int64_t cached = 0, int32_t priority = 0) {
  return {id, tenant, priority, cached};
}

TEST(FairQueue, FcfsWithinOneTenant) {
  FairQueue q;
  for (RequestId i = 1; i <= 5; ++i) q.push(req(i, 7));
  for (RequestId i = 1; i <= 5; ++i) EXPECT_EQ(q.pop()->id, i);
  EXPECT_FALSE(q.pop());
}

TEST(FairQueue, AFloodDoesNotDelayAnotherTenantBeyondOneAdmission) {
  FairQueue q;
  for (RequestId i = 0; i < 200; ++i) q.push(req(i, /*tenant=*/1));
  // The flooder has been served a lot already.
  for (int i = 0; i < 10; ++i) {
    auto r = q.pop();
    q.charge(r->tenant, 500);
  }
  q.push(req(1000, /*tenant=*/2));
  auto next = q.pop();
  EXPECT_EQ(next->id, 1000u) << "the newcomer is served before the flooder's next request";
}

TEST(FairQueue, IdleTenantBanksNoCredit) {
  FairQueue q;
  q.push(req(1, 1));
  q.push(req(2, 2));
  // Tenant 1 runs for a long time while tenant 2 waits... then tenant 3 arrives fresh.
  q.charge(1, 10'000);
  q.charge(2, 10'000);
  q.push(req(3, 3));
  // Tenant 3's counter is lifted to the lowest active counter: it does not get
  // 10'000 tokens of service in a row.
  EXPECT_EQ(q.counter(3), q.counter(1));
}

TEST(FairQueue, ServiceSharesFollowWeights) {
  FairQueue q;
  q.set_weight(1, 1);
  q.set_weight(2, 3);
  RequestId next_id = 0;
  for (int i = 0; i < 100; ++i) {
    q.push(req(next_id++, 1));
    q.push(req(next_id++, 2));
  }
  int64_t served[3] = {};
  for (int i = 0; i < 80; ++i) {
    auto r = q.pop();
    q.charge(r->tenant, 100);
    served[r->tenant] += 100;
  }
  EXPECT_NEAR(static_cast<double>(served[2]) / served[1], 3.0, 0.35);
}

TEST(FairQueue, LongestCachedPrefixFirstWhenAsked) {
  FairQueue q({.prefer_cached_prefix = true, .lpm_max_queue = 8});
  q.push(req(1, 1, /*cached=*/0));
  q.push(req(2, 1, /*cached=*/512));
  q.push(req(3, 1, /*cached=*/64));
  EXPECT_EQ(q.pop()->id, 2u);
  EXPECT_EQ(q.pop()->id, 3u);
  EXPECT_EQ(q.pop()->id, 1u);
}

TEST(FairQueue, LongQueuesFallBackToFcfs) {
  FairQueue q({.prefer_cached_prefix = true, .lpm_max_queue = 2});
  q.push(req(1, 1, 0));
  q.push(req(2, 1, 512));
  q.push(req(3, 1, 64));
  EXPECT_EQ(q.pop()->id, 1u);
}

TEST(FairQueue, PriorityBeatsFairness) {
  FairQueue q;
  q.push(req(1, 1));
  q.charge(2, 1'000'000);
  q.push(req(2, 2, 0, /*priority=*/5));
  EXPECT_EQ(q.pop()->id, 2u);
}

TEST(FairQueue, RemoveAndPushFrontKeepTheCount) {
  FairQueue q;
  for (RequestId i = 1; i <= 4; ++i) q.push(req(i, i % 2));
  EXPECT_TRUE(q.remove(3));
  EXPECT_FALSE(q.remove(3));
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.size(), 3u);
  // A requeued request goes back to the head of its own tenant's queue.
  FairQueue one;
  for (RequestId i = 1; i <= 3; ++i) one.push(req(i, 9));
  auto r = one.pop();
  one.push_front(*r);
  EXPECT_EQ(one.peek()->id, r->id);
  EXPECT_EQ(one.size(), 3u);
}

TEST(FairQueue, RandomOperationsNeverLoseARequest) {
  std::mt19937 rng(11);
  FairQueue q;
  std::set<RequestId> waiting;
  RequestId next = 0;
  for (int step = 0; step < 5000; ++step) {
    switch (rng() % 4) {
      case 0:
      case 1: {
        RequestId id = next++;
        q.push(req(id, rng() % 5, rng() % 100, static_cast<int32_t>(rng() % 2)));
        waiting.insert(id);
        break;
      }
      case 2:
        if (auto r = q.pop()) {
          EXPECT_EQ(waiting.erase(r->id), 1u);
          q.charge(r->tenant, rng() % 1000);
        }
        break;
      case 3:
        if (!waiting.empty()) {
          RequestId id = *waiting.begin();
          EXPECT_TRUE(q.remove(id));
          waiting.erase(id);
        }
        break;
    }
    ASSERT_EQ(q.size(), waiting.size());
  }
}

}  // namespace
}  // namespace kvgate::policies
