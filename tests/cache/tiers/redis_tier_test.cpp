// The Redis tier against a real redis-server of the test's own: records
// round-trip and are verified like the disk tier's, keys separate models and
// tenants, a damaged value is caught and deleted, a dead or frozen Redis is
// a counted miss within the timeout and never blocks a write, a restarted
// one is reconnected, and one replica learns another's writes without
// asking Redis.
#include "cache/tiers/redis_tier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <functional>
#include <thread>

#include "tests/cache/tiers/redis_test_server.h"
#include "tests/cache/tiers/tier_test_support.h"

namespace kvgate::cache {
namespace {

using namespace std::chrono_literals;
using testing::key_at;
using testing::record_for;
using testing::RedisServer;
using testing::scope_of;
using testing::small_identity;
using testing::tier_key;
using testing::verify;
using Clock = std::chrono::steady_clock;

// The cluster key of these tests' replicas.
std::shared_ptr<const RedisSeal> cluster_seal(uint8_t fill = 7) {
  RedisKeys k;
  k.names.fill(fill);
  SealKey key;
  key.fill(static_cast<uint8_t>(fill + 1));
  k.keys.emplace_back(1, key);
  return std::make_shared<const RedisSeal>(std::move(k));
}

RedisTierOptions options(int port, KvIdentity id = small_identity()) {
  RedisTierOptions o;
  o.port = port;
  o.identity = id;
  o.seal = cluster_seal();
  o.timeout = 50ms;
  o.reconnect_min = 20ms;  // tests wait for reconnects: keep them quick
  o.reconnect_max = 200ms;
  return o;
}

bool put(RedisTier& tier, TenantId t, int32_t i) {
  return tier.enqueue(record_for(key_at(scope_of(t), i), t, tier.identity()), t);
}
TierKey key(TenantId t, int32_t i) { return tier_key(key_at(scope_of(t), i)); }

bool eventually(const std::function<bool()>& f, std::chrono::milliseconds limit = 5s) {
  const auto deadline = Clock::now() + limit;
  while (!f()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

class RedisTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisServer::available()) GTEST_SKIP() << "redis-server is not on PATH (apt-get install redis-server)";
    server_ = std::make_unique<RedisServer>();
  }
  std::unique_ptr<RedisServer> server_;
};

TEST_F(RedisTierTest, ARecordRoundTripsThroughRedis) {
  RedisTier writer(options(server_->port()));
  EXPECT_TRUE(writer.stats().connected);
  ASSERT_TRUE(put(writer, 1, 0));
  EXPECT_TRUE(writer.contains(key(1, 0)));
  EXPECT_FALSE(put(writer, 1, 0));  // queued or stored already: not taken twice
  writer.flush();
  EXPECT_EQ(writer.stats().tier.persisted, 1);

  RedisTier reader(options(server_->port()));  // another replica: nothing queued, a real GET
  const std::optional<std::vector<std::byte>> r = reader.get(key(1, 0));
  ASSERT_TRUE(r);
  EXPECT_EQ(verify(*r, key_at(scope_of(1), 0), reader.identity()), RecordFault::kNone);
  EXPECT_FALSE(reader.get(key(1, 1)));
  const RedisTierStats s = reader.stats();
  EXPECT_EQ(s.tier.hits, 1);
  EXPECT_EQ(s.tier.misses, 1);
  EXPECT_EQ(s.read_errors, 0);
}

TEST_F(RedisTierTest, GetManyReadsAChainInOrder) {
  RedisTier tier(options(server_->port()));
  for (int32_t i = 0; i < 5; ++i) ASSERT_TRUE(put(tier, 1, i));
  tier.flush();
  RedisTier other(options(server_->port()));
  const std::vector<TierKey> keys = {key(1, 0), key(1, 1), key(1, 7), key(1, 3), key(1, 4)};
  const auto got = other.get_many(keys);
  ASSERT_EQ(got.size(), keys.size());
  EXPECT_FALSE(got[2]);
  for (size_t i : {0u, 1u, 3u, 4u}) {
    ASSERT_TRUE(got[i]) << i;
    EXPECT_EQ(verify(*got[i], key_at(scope_of(1), i == 0 ? 0 : static_cast<int32_t>(i)), other.identity()),
              RecordFault::kNone);
  }
}

std::string hex(const Hash128& h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.hi),
                static_cast<unsigned long long>(h.lo));
  return buf;
}

TEST_F(RedisTierTest, KeysSeparateModelsAndTenantsAndNameNeither) {
  KvIdentity other_model = small_identity();
  other_model.model.lo ^= 1;
  RedisTier a(options(server_->port()));
  RedisTier b(options(server_->port(), other_model));
  EXPECT_NE(a.record_name(key(1, 0)), b.record_name(key(1, 0)));
  EXPECT_NE(a.record_name(key(1, 0)), a.record_name(key(2, 0)));
  const std::string name = a.record_name(key(1, 0));
  EXPECT_TRUE(name.starts_with("kvgate:kv:2:")) << name;
  EXPECT_EQ(name.find(hex(key(1, 0).scope)), std::string::npos) << "no scope in the clear: " << name;
  EXPECT_EQ(name.find(hex(key(1, 0).hash)), std::string::npos) << "no chain hash in the clear: " << name;
  RedisTierOptions other_cluster = options(server_->port());
  other_cluster.seal = cluster_seal(9);
  EXPECT_NE(RedisTier(other_cluster).record_name(key(1, 0)), name) << "names are keyed";

  ASSERT_TRUE(put(a, 1, 0));
  a.flush();
  EXPECT_FALSE(b.get(key(1, 0)));              // the same scope and hash under another model
  EXPECT_FALSE(a.get({scope_of(2), key(1, 0).hash}));  // the same hash under another tenant's scope
  // A write under b's own model, announced after a's: Redis delivers a
  // subscriber's messages in the order they were published, so once b has
  // heard of this one it would have heard of a's, were a's announced to it.
  RedisTier b_writer(options(server_->port(), other_model));
  ASSERT_TRUE(put(b_writer, 1, 1));
  b_writer.flush();
  ASSERT_TRUE(eventually([&] { return b.contains(key(1, 1)); }));
  EXPECT_FALSE(b.contains(key(1, 0)));
  EXPECT_TRUE(a.get(key(1, 0)));
}

TEST_F(RedisTierTest, AFlippedByteIsCaughtAndTheRecordDeleted) {
  RedisTier tier(options(server_->port()));
  ASSERT_TRUE(put(tier, 1, 0));
  tier.flush();
  std::optional<std::vector<std::byte>> r = tier.get(key(1, 0));
  ASSERT_TRUE(r);
  (*r)[r->size() - 3] ^= std::byte{0x10};
  ASSERT_TRUE(tier.put_raw_for_test(key(1, 0), *r));

  RedisTier reader(options(server_->port()));
  // The reader's first SCAN learns of the key; waited for, so that its
  // answer cannot land after the drop and put the key back (a known-keys
  // set is approximate by design: that would cost one failed read later).
  for (int i = 0; i < 500 && !reader.contains(key(1, 0)); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(reader.contains(key(1, 0)));
  const std::optional<std::vector<std::byte>> bad = reader.get(key(1, 0));
  ASSERT_TRUE(bad);
  const RecordFault why = verify(*bad, key_at(scope_of(1), 0), reader.identity());
  EXPECT_EQ(why, RecordFault::kPayloadChecksum);
  reader.drop_corrupt(key(1, 0), why);
  EXPECT_EQ(reader.stats().tier.faults.at("payload_checksum"), 1);
  EXPECT_FALSE(reader.contains(key(1, 0)));
  EXPECT_FALSE(reader.get(key(1, 0)));  // deleted from Redis, for every replica
  EXPECT_FALSE(tier.get(key(1, 0)));
}

TEST_F(RedisTierTest, AKilledRedisIsACountedMissAndNeverBlocksAWrite) {
  RedisTier tier(options(server_->port()));
  ASSERT_TRUE(put(tier, 1, 0));
  tier.flush();
  server_->kill();

  // Misses, not errors or waits: a get() on a dead Redis returns (a hang
  // would end the test at ctest's timeout), and puts are copies into the
  // queue or refusals, each counted below. No test times anything.
  EXPECT_FALSE(tier.get(key(1, 0)));
  EXPECT_FALSE(tier.get(key(1, 0)));  // within the backoff: no connect attempt at all
  for (int32_t i = 1; i <= 2000; ++i) put(tier, 1, i);
  tier.flush();
  const RedisTierStats s = tier.stats();
  EXPECT_GE(s.read_errors, 2);
  EXPECT_EQ(s.tier.misses, 2);
  EXPECT_GT(s.tier.write_errors, 0);
  EXPECT_EQ(s.tier.persisted, 1);
  EXPECT_EQ(s.tier.refused, 2000);  // each lost in a failed batch
  EXPECT_FALSE(s.connected);
}

TEST_F(RedisTierTest, AFrozenRedisIsAMissWithinTheTimeout) {
  RedisTier tier(options(server_->port()));
  ASSERT_TRUE(put(tier, 1, 0));
  tier.flush();
  server_->pause();  // accepts nothing, answers nothing
  // The read gives up at its timeout and is a counted miss: without one it
  // would never return, and the test would end at ctest's timeout.
  EXPECT_FALSE(tier.get(key(1, 0)));
  EXPECT_EQ(tier.stats().read_errors, 1);
  server_->resume();
  EXPECT_TRUE(eventually([&] { return tier.get(key(1, 0)).has_value(); }));
}

TEST_F(RedisTierTest, ARestartedRedisIsReconnectedAndServesAgain) {
  RedisTier tier(options(server_->port()));
  server_->kill();
  EXPECT_FALSE(tier.get(key(1, 0)));
  server_->start();  // empty: --save "" keeps nothing across the restart
  EXPECT_TRUE(eventually([&] {
    put(tier, 1, 0);
    tier.flush();
    return tier.get(key(1, 0)).has_value();
  }));
  RedisTier other(options(server_->port()));
  EXPECT_TRUE(other.get(key(1, 0)));
  EXPECT_TRUE(eventually([&] { return tier.stats().connected; }));
  EXPECT_GE(tier.stats().connects, 3);
}

TEST_F(RedisTierTest, AReplicaLearnsOtherReplicasWritesWithoutAskingRedis) {
  RedisTier listening(options(server_->port()));  // subscribed before the writes: told of each
  RedisTier writer(options(server_->port()));
  for (int32_t i = 0; i < 3; ++i) ASSERT_TRUE(put(writer, 1, i));
  writer.flush();
  EXPECT_TRUE(eventually([&] { return listening.contains(key(1, 2)); }));
  RedisTier late(options(server_->port()));  // started after them: finds them by SCAN
  EXPECT_TRUE(eventually([&] { return late.contains(key(1, 0)) && late.contains(key(1, 2)); }));
  EXPECT_FALSE(late.contains(key(1, 3)));
  EXPECT_FALSE(put(late, 1, 0));  // known stored: not written again
}

// What Redis holds is sealed under the cluster key: a record planted by
// someone without it (however well it checks), one sealed under another
// key (or moved under another block's name: RedisSeal's test) opens to
// nothing: a counted miss, deleted, never served.
TEST_F(RedisTierTest, AValueThatDoesNotOpenIsACountedMissAndDeleted) {
  RedisTier tier(options(server_->port()));
  ASSERT_TRUE(put(tier, 1, 0));
  ASSERT_TRUE(put(tier, 1, 1));
  tier.flush();
  const std::optional<std::vector<std::byte>> good = tier.get(key(1, 0));
  ASSERT_TRUE(good);
  ASSERT_EQ(verify(*good, key_at(scope_of(1), 0), tier.identity()), RecordFault::kNone);

  // A forger with a valid record but no key: the bytes as they are.
  ASSERT_TRUE(tier.put_raw_for_test(key(1, 2), record_for(key_at(scope_of(1), 2), 1, tier.identity()), false));
  EXPECT_FALSE(tier.get(key(1, 2)));
  EXPECT_EQ(tier.stats().unsealed, 1);
  // Sealed under another cluster's key.
  RedisTierOptions other = options(server_->port());
  RedisKeys same_names;
  same_names.names.fill(7);
  SealKey wrong;
  wrong.fill(42);
  same_names.keys.emplace_back(1, wrong);
  other.seal = std::make_shared<const RedisSeal>(std::move(same_names));
  RedisTier forger(other);  // our names key, another record key
  ASSERT_TRUE(forger.put_raw_for_test(key(1, 3), record_for(key_at(scope_of(1), 3), 1, tier.identity())));
  EXPECT_FALSE(tier.get(key(1, 3)));
  EXPECT_EQ(tier.stats().unsealed, 2);
  EXPECT_EQ(tier.stats().tier.hits, 1);
  EXPECT_TRUE(tier.get(key(1, 1))) << "the tier's own records still open";
  EXPECT_FALSE(tier.get(key(1, 2))) << "the forgery was deleted: now a plain miss";
  EXPECT_EQ(tier.stats().unsealed, 2);
}

// The admin API's tenant eviction reaches Redis: every record of the
// scope goes, found by its scope tag, and no other scope's.
TEST_F(RedisTierTest, EvictingAScopeDeletesItsRecordsOnly) {
  RedisTier tier(options(server_->port()));
  for (int32_t i = 0; i < 5; ++i) ASSERT_TRUE(put(tier, 1, i));
  for (int32_t i = 0; i < 3; ++i) ASSERT_TRUE(put(tier, 2, i));
  EXPECT_EQ(tier.evict_scope(scope_of(1)), 5) << "queued records are written first, then deleted";
  for (int32_t i = 0; i < 5; ++i) {
    EXPECT_FALSE(tier.contains(key(1, i))) << i;
    EXPECT_FALSE(tier.get(key(1, i))) << i;
  }
  for (int32_t i = 0; i < 3; ++i) EXPECT_TRUE(tier.get(key(2, i))) << i;
  EXPECT_EQ(tier.evict_scope(scope_of(1)), 0);
  server_->kill();
  EXPECT_EQ(tier.evict_scope(scope_of(2)), -1) << "Redis down: said, not thrown";
}

// AUTH with the configured password: served. Without it or with another:
// every read a miss, never an error, and the refusal is what stats say.
TEST(RedisTierAuthTest, ThePasswordIsSentAndAWrongOneIsAMiss) {
  if (!RedisServer::available()) GTEST_SKIP() << "redis-server is not on PATH";
  RedisServer server("a-long-redis-password");
  RedisTierOptions o = options(server.port());
  o.password = "a-long-redis-password";
  RedisTier tier(o);
  ASSERT_TRUE(put(tier, 1, 0));
  tier.flush();
  EXPECT_TRUE(tier.get(key(1, 0)));
  EXPECT_TRUE(tier.stats().connected);
  for (const char* password : {"", "wrong"}) {
    o.password = password;
    RedisTier locked_out(o);
    EXPECT_FALSE(locked_out.get(key(1, 0))) << password;
    EXPECT_FALSE(locked_out.stats().connected) << password;
  }
}

TEST_F(RedisTierTest, AFullWriteQueueRefusesAndCounts) {
  RedisTierOptions o = options(server_->port());
  o.write_queue_bytes = 4 * record_bytes(small_identity());
  RedisTier tier(std::move(o));
  server_->pause();  // the writer's first batch waits out its timeout; the queue fills meanwhile
  int accepted = 0;
  for (int32_t i = 0; i < 100; ++i) accepted += put(tier, 1, i) ? 1 : 0;  // refusals, never a wait
  EXPECT_LT(accepted, 100);
  EXPECT_GE(tier.stats().tier.refused, 100 - accepted);
  server_->resume();
}

TEST(RedisTierOptionsTest, BadOptionsAreNamed) {
  RedisTierOptions o;
  o.identity = small_identity();
  o.port = 0;
  EXPECT_THROW(RedisTier{o}, std::invalid_argument);
  o.port = 6379;
  o.host.clear();
  EXPECT_THROW(RedisTier{o}, std::invalid_argument);
}

}  // namespace
}  // namespace kvgate::cache
