// prompt_cache_key's bindings: a key stays on its replica while that one is
// live and has room, moves (and is bound anew) when it is not, and the
// least recently used keys go first when the table is full.
#include "gateway/cluster/route/sticky_routes.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvgate::route {
namespace {

std::vector<ReplicaState> replicas(std::vector<int64_t> loads) {
  std::vector<ReplicaState> out;
  for (int64_t l : loads) out.push_back({true, true, l});
  return out;
}

TEST(StickyRoutes, AKeyStaysOnItsReplicaWhileItIsLiveAndHasRoom) {
  StickyRoutes s;
  std::vector<ReplicaState> r = replicas({100, 100, 100});
  EXPECT_EQ(s.find(7, r, 50), std::nullopt);  // not bound yet: the policy decides
  s.bind(7, 1);
  EXPECT_EQ(s.find(7, r, 50), 1);
  EXPECT_EQ(s.find(8, r, 50), std::nullopt);  // another key
  // Loaded up to twice the mean plus the request: still its replica.
  r[1].load = 250;
  EXPECT_EQ(s.find(7, r, 100), 1);
  // Past it: the policy's choice instead.
  r[1].load = 1000;
  EXPECT_EQ(s.find(7, r, 50), std::nullopt);
  r[1].load = 100;
  r[1].live = false;  // dead, or the replica a retry avoids
  EXPECT_EQ(s.find(7, r, 50), std::nullopt);
  s.bind(7, 2);  // where the policy sent it: the key follows
  r[1].live = true;
  EXPECT_EQ(s.find(7, r, 50), 2);
  EXPECT_EQ(s.find(7, replicas({0, 0}), 50), std::nullopt);  // a replica id past the set
}

TEST(StickyRoutes, TheLeastRecentlyUsedKeyGoesFirst) {
  StickyRoutes s(2);
  const std::vector<ReplicaState> r = replicas({0, 0, 0});
  s.bind(1, 0);
  s.bind(2, 1);
  EXPECT_EQ(s.find(1, r, 1), 0);  // 1 is now the most recent
  s.bind(3, 2);                   // drops 2
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.find(1, r, 1), 0);
  EXPECT_EQ(s.find(2, r, 1), std::nullopt);
  EXPECT_EQ(s.find(3, r, 1), 2);
  StickyRoutes none(0);
  none.bind(1, 0);
  EXPECT_EQ(none.find(1, r, 1), std::nullopt);
}

}  // namespace
}  // namespace kvgate::route
