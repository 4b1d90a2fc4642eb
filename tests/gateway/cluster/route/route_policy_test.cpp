// The route policies: cache_aware's choice by its cost, prefix credit only
// for scorable replicas, dead replicas never chosen, round-robin even,
// random reproducible, and the names' errors.
#include "gateway/cluster/route/route_policy.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "gateway/cluster/route/route_error.h"

namespace kvgate::route {
namespace {

using policies::Tier;

cache::BlockHash h(uint64_t i) { return {i * 0x9e3779b97f4a7c15ull + 1, i}; }

struct Cluster {
  explicit Cluster(int n) : index(n), state(static_cast<size_t>(n)) {
    for (int i = 0; i < n; ++i) index.add_replica(), state[static_cast<size_t>(i)].live = true;
    for (uint64_t i = 0; i < 8; ++i) chain.push_back(h(i));
  }
  // Replica r holds the prompt's first `blocks` blocks in `tier`.
  void hold(ReplicaId r, int blocks, Tier tier) {
    for (int i = 0; i < blocks; ++i) index.stored(r, chain[static_cast<size_t>(i)], tier);
  }
  RouteRequest request() const { return {chain, 8 * 16, 16}; }
  ReplicaId choose(RoutePolicy& p) {
    const auto r = p.choose(request(), index, state);
    EXPECT_TRUE(r.has_value());
    return r.value_or(-1);
  }
  ReplicaIndex index;
  std::vector<ReplicaState> state;
  std::vector<cache::BlockHash> chain;
};

TEST(RouteCost, FreshTokensPlusRestoresPlusLoad) {
  const std::vector<cache::BlockHash> chain(10);
  const RouteRequest req{chain, 150, 16};  // the last block holds 6 tokens
  const CostWeights w{0.1, 0.3, 0.5, 2.0};
  EXPECT_DOUBLE_EQ(route_cost({}, req, {true, true, 7}, w), 150 + 14);
  EXPECT_DOUBLE_EQ(route_cost({4, 2, 1, 1}, req, {true, true, 0}, w), 150 - 128 + 0.1 * 32 + 0.3 * 16 + 0.5 * 16);
  // Held whole: nothing fresh (the short last block counted as a full one).
  EXPECT_DOUBLE_EQ(route_cost({10, 0, 0, 0}, req, {true, true, 0}, w), 0);
}

TEST(CacheAware, PicksTheReplicaWithTheCheapestPrefill) {
  Cluster c(4);
  c.hold(1, 3, Tier::kDevice);
  c.hold(2, 6, Tier::kDisk);  // more blocks, but slow ones: 6 x 16 x 0.3 = 28.8 < 5 x 16 fresh saved
  auto p = make_route_policy("cache_aware");
  EXPECT_EQ(c.choose(*p), 2);
  c.hold(3, 6, Tier::kDevice);
  EXPECT_EQ(c.choose(*p), 3);
}

TEST(CacheAware, LoadOutweighsASmallPrefix) {
  Cluster c(2);
  c.hold(0, 2, Tier::kDevice);  // saves 32 tokens
  c.state[0].load = 1000;  // x 0.1
  auto p = make_route_policy("cache_aware");
  EXPECT_EQ(c.choose(*p), 1);
  auto light = make_route_policy("cache_aware:load=0.01");
  EXPECT_EQ(c.choose(*light), 0);
}

TEST(CacheAware, AnUnscorableReplicaGetsNoPrefixCreditButServes) {
  Cluster c(2);
  c.hold(0, 8, Tier::kDevice);
  c.state[0].scorable = false;
  c.state[1].load = 10;
  auto p = make_route_policy("cache_aware");
  // 0 gets no credit for its 8 blocks: it costs the whole prompt, 1 that plus its load.
  EXPECT_EQ(c.choose(*p), 0);
  c.state[1].load = 0;
  c.state[0].load = 10;
  EXPECT_EQ(c.choose(*p), 1);
  // Alone, it still serves.
  c.state[1].live = false;
  EXPECT_EQ(c.choose(*p), 0);
}

TEST(CacheAware, ADeadReplicaIsNeverChosen) {
  Cluster c(3);
  c.hold(1, 8, Tier::kDevice);
  c.state[1].live = false;
  auto p = make_route_policy("cache_aware");
  for (int i = 0; i < 10; ++i) EXPECT_NE(c.choose(*p), 1);
  for (auto& s : c.state) s.live = false;
  EXPECT_FALSE(p->choose(c.request(), c.index, c.state).has_value());
}

TEST(CacheAware, TiesSpreadOverTheLeastRecentlyChosen) {
  Cluster c(4);
  auto p = make_route_policy("cache_aware");
  std::vector<int> seen;
  for (int i = 0; i < 8; ++i) seen.push_back(c.choose(*p));
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3}));
}

TEST(RoundRobin, EvenOverTheLiveReplicas) {
  Cluster c(5);
  c.state[2].live = false;
  c.hold(0, 8, Tier::kDevice);  // residency means nothing to it
  auto p = make_route_policy("round_robin");
  std::map<int, int> count;
  for (int i = 0; i < 400; ++i) ++count[c.choose(*p)];
  EXPECT_EQ(count, (std::map<int, int>{{0, 100}, {1, 100}, {3, 100}, {4, 100}}));
}

TEST(Random, ReproducibleBySeedAndNeverDead) {
  Cluster c(6);
  c.state[4].live = false;
  auto a = make_route_policy("random:seed=9"), b = make_route_policy("random:seed=9");
  std::map<int, int> count;
  for (int i = 0; i < 3000; ++i) {
    const int r = c.choose(*a);
    EXPECT_EQ(r, c.choose(*b));
    ++count[r];
  }
  EXPECT_FALSE(count.contains(4));
  for (int r : {0, 1, 2, 3, 5}) EXPECT_GT(count[r], 450) << r;
}

TEST(RoutePolicies, NamesAndErrors) {
  EXPECT_EQ(route_policy_names(), (std::vector<std::string>{"cache_aware", "round_robin", "random"}));
  EXPECT_EQ(parse_route_list("all"), route_policy_names());
  EXPECT_EQ(parse_route_list("cache_aware:load=0.5,host=0.2,round_robin"),
            (std::vector<std::string>{"cache_aware:load=0.5,host=0.2", "round_robin"}));
  EXPECT_EQ(make_route_policy("cache_aware:load=0.5")->name(), "cache_aware:host=0.1,disk=0.3,shared=0.4,load=0.5");
  try {
    make_route_policy("kv");
    FAIL();
  } catch (const RouteError& e) {
    EXPECT_STREQ(e.what(), "unknown router 'kv' (routers: cache_aware, round_robin, random)");
  }
  EXPECT_THROW(make_route_policy("cache_aware:speed=1"), RouteError);
  EXPECT_THROW(make_route_policy("cache_aware:load=-1"), RouteError);
  EXPECT_THROW(make_route_policy("cache_aware:load="), RouteError);
  EXPECT_THROW(make_route_policy("round_robin:seed=1"), RouteError);
  EXPECT_THROW(make_route_policy("random:seed=1.5"), RouteError);
  EXPECT_THROW(parse_route_list("lru"), RouteError);
  EXPECT_THROW(parse_route_list("random,"), RouteError);
  EXPECT_THROW(parse_route_list("load=1"), RouteError);
}

}  // namespace
}  // namespace kvgate::route
