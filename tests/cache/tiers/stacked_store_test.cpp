// StackedStore over two in-memory stores: reads go to the upper store first
// and to the lower one for what the upper lacks, writes go to both, and a
// corrupt record is dropped from the store that served it.
#include "cache/tiers/stacked_store.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

#include "tests/cache/tiers/tier_test_support.h"

namespace kvgate::cache {
namespace {

using testing::key_at;
using testing::record_for;
using testing::scope_of;
using testing::small_identity;
using testing::tier_key;

// A BlockStore in a map, counting what was asked of it.
class MapStore final : public BlockStore {
 public:
  explicit MapStore(KvIdentity id) : id_(id) {}
  const KvIdentity& identity() const override { return id_; }
  bool contains(const TierKey& k) const override {
    std::lock_guard l(mu_);
    return records_.contains(k.bytes());
  }
  bool enqueue(std::span<const std::byte> record, TenantId) override {
    const std::optional<RecordHeader> h = read_record_header(record);
    std::lock_guard l(mu_);
    return records_.emplace(TierKey{h->key.scope, h->key.hash}.bytes(), std::vector<std::byte>(record.begin(), record.end()))
        .second;
  }
  std::optional<std::vector<std::byte>> get(const TierKey& k) override {
    std::lock_guard l(mu_);
    ++gets;
    const auto it = records_.find(k.bytes());
    if (it == records_.end()) return std::nullopt;
    return it->second;
  }
  void drop_corrupt(const TierKey& k, RecordFault) override {
    std::lock_guard l(mu_);
    ++drops;
    records_.erase(k.bytes());
  }
  int gets = 0, drops = 0;

 private:
  const KvIdentity id_;
  mutable std::mutex mu_;
  std::map<std::array<char, 32>, std::vector<std::byte>> records_;
};

struct Stack {
  std::shared_ptr<MapStore> upper = std::make_shared<MapStore>(small_identity());
  std::shared_ptr<MapStore> lower = std::make_shared<MapStore>(small_identity());
  StackedStore stacked{upper, lower};
};

BlockKey bkey(int32_t i) { return key_at(scope_of(1), i); }
std::vector<std::byte> rec(int32_t i) { return record_for(bkey(i), 1, small_identity()); }

TEST(StackedStore, ReadsTheUpperStoreFirstThenTheLower) {
  Stack s;
  s.upper->enqueue(rec(0), 1);
  s.lower->enqueue(rec(0), 1);
  s.lower->enqueue(rec(1), 1);
  EXPECT_EQ(s.stacked.get(tier_key(bkey(0))), rec(0));
  EXPECT_EQ(s.upper->gets, 1);
  EXPECT_EQ(s.lower->gets, 0);  // the upper had it
  EXPECT_EQ(s.stacked.get(tier_key(bkey(1))), rec(1));
  EXPECT_EQ(s.upper->gets, 1);  // not asked for what it does not hold
  EXPECT_EQ(s.lower->gets, 1);
  EXPECT_FALSE(s.upper->contains(tier_key(bkey(1))));  // nothing copied up unverified
  EXPECT_FALSE(s.stacked.get(tier_key(bkey(2))));
}

TEST(StackedStore, GetManyKeepsTheOrderAcrossBothStores) {
  Stack s;
  s.upper->enqueue(rec(1), 1);
  s.lower->enqueue(rec(0), 1);
  s.lower->enqueue(rec(2), 1);
  const std::vector<TierKey> keys = {tier_key(bkey(0)), tier_key(bkey(1)), tier_key(bkey(3)), tier_key(bkey(2))};
  const auto got = s.stacked.get_many(keys);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], rec(0));
  EXPECT_EQ(got[1], rec(1));
  EXPECT_FALSE(got[2]);
  EXPECT_EQ(got[3], rec(2));
}

TEST(StackedStore, WritesGoToBothAndContainsAsksEither) {
  Stack s;
  EXPECT_TRUE(s.stacked.enqueue(rec(0), 1));
  EXPECT_TRUE(s.upper->contains(tier_key(bkey(0))));
  EXPECT_TRUE(s.lower->contains(tier_key(bkey(0))));
  EXPECT_FALSE(s.stacked.enqueue(rec(0), 1));  // both hold it
  s.lower->enqueue(rec(1), 1);
  EXPECT_TRUE(s.stacked.contains(tier_key(bkey(1))));
  EXPECT_TRUE(s.stacked.enqueue(rec(1), 1));  // the upper takes what only the lower had
  EXPECT_FALSE(s.stacked.contains(tier_key(bkey(2))));
}

TEST(StackedStore, ACorruptRecordIsDroppedFromTheStoreThatServedIt) {
  Stack s;
  s.upper->enqueue(rec(0), 1);
  s.lower->enqueue(rec(0), 1);
  s.lower->enqueue(rec(1), 1);
  s.stacked.drop_corrupt(tier_key(bkey(0)), RecordFault::kPayloadChecksum);  // the upper served it
  EXPECT_EQ(s.upper->drops, 1);
  EXPECT_EQ(s.lower->drops, 0);
  EXPECT_TRUE(s.lower->contains(tier_key(bkey(0))));
  s.stacked.drop_corrupt(tier_key(bkey(1)), RecordFault::kPayloadChecksum);  // the lower did
  EXPECT_EQ(s.upper->drops, 1);
  EXPECT_EQ(s.lower->drops, 1);
}

TEST(StackedStore, RefusesStoresOfTwoIdentities) {
  KvIdentity other = small_identity();
  other.block_size = 8;
  EXPECT_THROW(StackedStore(std::make_shared<MapStore>(small_identity()), std::make_shared<MapStore>(other)),
               std::invalid_argument);
  EXPECT_THROW(StackedStore(nullptr, std::make_shared<MapStore>(other)), std::invalid_argument);
}

}  // namespace
}  // namespace kvgate::cache
