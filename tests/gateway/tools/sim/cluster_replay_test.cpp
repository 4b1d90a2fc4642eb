// The routed replay: one replica is the plain replay; cache_aware follows
// a conversation to the replica that holds it, through the tiers too (the
// index fed by the replicas' own events); round_robin is even and blind;
// bad configurations are errors.
#include "gateway/tools/sim/cluster_replay.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "gateway/cluster/route/route_error.h"

namespace kvgate::sim {
namespace {

using policies::Tier;

// Conversations 0..k-1 interleaved, each turn extending its own chain by
// one block: conversation c's ids are c * 100 + turn.
ReplayTrace conversations(int k, int turns) {
  ReplayTrace t;
  int64_t ms = 0;
  for (int turn = 0; turn < turns; ++turn)
    for (int c = 0; c < k; ++c) {
      std::vector<int32_t> chain;
      for (int i = 0; i <= turn; ++i) chain.push_back(c * 100 + i);
      t.add(512 * static_cast<int64_t>(chain.size()), chain, ms += 60000, 10);
    }
  return t;
}

ClusterConfig config(std::vector<TierSpec> tiers, int32_t replicas, const std::string& router) {
  return {{std::move(tiers), policies::parse_policy_spec("lru"), {}, 1, 0.02}, replicas, router};
}

TEST(ClusterReplay, OneReplicaIsThePlainReplay) {
  const ReplayTrace t = conversations(5, 6);
  for (const char* router : {"cache_aware", "round_robin", "random"}) {
    const ClusterResult c = replay_cluster(t, config({{Tier::kDevice, 7}}, 1, router));
    const ReplayResult one = replay(t, config({{Tier::kDevice, 7}}, 1, router).replica);
    EXPECT_EQ(c.total.hit_tokens, one.hit_tokens) << router;
    EXPECT_EQ(c.total.tokens, one.tokens);
    EXPECT_EQ(c.requests, std::vector<int64_t>{30});
  }
}

TEST(ClusterReplay, CacheAwareFollowsEachConversationRoundRobinDoesNot) {
  // 4 conversations of 6 turns over 4 replicas, each big enough for one.
  const ReplayTrace t = conversations(4, 6);
  const ReplayResult one = replay(t, config({{Tier::kDevice, 24}}, 1, "").replica);
  const ClusterResult aware = replay_cluster(t, config({{Tier::kDevice, 6}}, 4, "cache_aware"));
  EXPECT_EQ(aware.total.hit_tokens, one.hit_tokens);  // every turn but the first hits its whole history
  EXPECT_EQ(aware.total.hit_blocks, 4 * (0 + 1 + 2 + 3 + 4 + 5));
  EXPECT_DOUBLE_EQ(aware.balance(), 1.0);
  // 5 conversations on 4 replicas in turn: no turn meets its history.
  const ClusterResult rr = replay_cluster(conversations(5, 6), config({{Tier::kDevice, 6}}, 4, "round_robin"));
  EXPECT_EQ(rr.total.hit_blocks, 0);
  EXPECT_LE(rr.balance(), 8.0 / 7.5);
}

TEST(ClusterReplay, TheRouterFindsAPrefixMovedToTheHost) {
  // Device 1 block, host 8: a conversation's history is on its replica's
  // host by the next turn; cache_aware still sends it there.
  const ReplayTrace t = conversations(2, 4);
  const ClusterResult c = replay_cluster(t, config({{Tier::kDevice, 1}, {Tier::kHost, 8}}, 2, "cache_aware"));
  EXPECT_EQ(c.total.hit_blocks, 2 * (0 + 1 + 2 + 3));
  EXPECT_GT(c.total.tiers[1].blocks, 0);
  EXPECT_EQ(c.requests, (std::vector<int64_t>{4, 4}));
}

TEST(ClusterReplay, BadConfigurationsAreErrors) {
  const ReplayTrace t = conversations(2, 2);
  EXPECT_THROW(replay_cluster(t, config({{Tier::kDevice, 4}}, 0, "round_robin")), Error);
  EXPECT_THROW(replay_cluster(t, config({{Tier::kDevice, 4}}, 2000, "round_robin")), Error);
  EXPECT_THROW(replay_cluster(t, config({{Tier::kDevice, 0}}, 2, "round_robin")), Error);
  EXPECT_THROW(replay_cluster(t, config({{Tier::kDevice, 4}}, 2, "nope")), route::RouteError);
  ClusterConfig bound = config({{Tier::kDevice, 4}}, 2, "random");
  bound.replica.policy = {"belady", {}};
  EXPECT_THROW(replay_cluster(t, bound), Error);
}

}  // namespace
}  // namespace kvgate::sim
