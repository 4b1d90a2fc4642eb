// BlockTable against std::unordered_map under random inserts and erases,
// through several growths and with keys that share home slots.
#include "gateway/cluster/route/block_table.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace kvgate::route {
namespace {

TEST(BlockTable, MatchesAMapThroughInsertsErasesAndGrowth) {
  BlockTable t;
  std::unordered_map<uint64_t, uint64_t> ref;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200000; ++i) {
    // Few distinct keys, so erases hit; some keys spaced by the table size
    // to collide on their home slot.
    const uint64_t key = 1 + (rng() % 5000) * (i % 3 == 0 ? 1024 : 1);
    if (rng() % 3 == 0) {
      t.erase(key);
      ref.erase(key);
    } else {
      bool fresh = false;
      uint64_t& v = t.insert(key, fresh);
      EXPECT_EQ(fresh, !ref.contains(key));
      v = key * 7;
      ref[key] = key * 7;
    }
  }
  EXPECT_EQ(t.size(), ref.size());
  for (const auto& [k, v] : ref) {
    ASSERT_NE(t.find(k), nullptr) << k;
    EXPECT_EQ(*t.find(k), v);
  }
  for (uint64_t k = 1; k < 6000; ++k) EXPECT_EQ(t.find(k) != nullptr, ref.contains(k)) << k;
}

TEST(BlockTable, EraseIfVisitsEveryEntryOnce) {
  BlockTable t;
  for (uint64_t k = 1; k <= 3000; ++k) {
    bool fresh = false;
    t.insert(k, fresh) = k;
  }
  int visits = 0;
  t.erase_if([&](uint64_t key, uint64_t& value) {
    ++visits;
    value += 1;
    return key % 2 == 0;
  });
  EXPECT_EQ(visits, 3000);
  EXPECT_EQ(t.size(), 1500u);
  for (uint64_t k = 1; k <= 3000; ++k) {
    if (k % 2 == 0) EXPECT_EQ(t.find(k), nullptr);
    else EXPECT_EQ(*t.find(k), k + 1);
  }
}

}  // namespace
}  // namespace kvgate::route
