// Two schedulers as two replicas: separate device pools, separate host
// tiers, each its own RedisTier on one redis-server. A prefix the first
// computed is restored from Redis by the second, whose output is the
// cache-off output; another tenant's identical prompt restores nothing; a
// damaged record in Redis is a counted miss there too.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "cache/tiers/host_tier.h"
#include "cache/tiers/redis_tier.h"
#include "tests/cache/tiers/redis_test_server.h"
#include "tests/engine/sched/prefix_support.h"

namespace kvgate {
namespace {

using namespace prefix_testing;
using namespace std::chrono_literals;
using cache::testing::RedisServer;

constexpr int32_t kB = 16;

cache::KvIdentity identity_of(const std::shared_ptr<const Model>& m) { return tier_identity_of(*m, kB); }

// One replica: its own device pool and host tier, its own connection to the shared Redis.
struct Replica {
  Replica(const std::shared_ptr<const Model>& m, int port) {
    cache::RedisTierOptions o;
    o.port = port;
    o.identity = identity_of(m);
    cache::RedisKeys keys;  // the replicas' one cluster key
    keys.names.fill(3);
    keys.keys.emplace_back(1, cache::SealKey{});
    o.seal = std::make_shared<const cache::RedisSeal>(std::move(keys));
    redis = std::make_shared<cache::RedisTier>(std::move(o));
    host = std::make_shared<cache::HostTier>(256 * static_cast<int64_t>(cache::record_bytes(identity_of(m))),
                                             identity_of(m));
    sched = make_prefix_scheduler(m, {.block_size = kB, .n_blocks = 12, .tiers = {host, redis}});
  }
  std::shared_ptr<cache::RedisTier> redis;
  std::shared_ptr<cache::HostTier> host;
  std::unique_ptr<Scheduler> sched;
};

Tokens prompt(size_t n, uint32_t salt) { return some_tokens(n, stories()->config().vocab_size, salt); }

Tokens cache_off(const Request& req) {
  auto s = make_prefix_scheduler(stories(), {.block_size = kB, .prefix_cache = false});
  return run_one(*s, req).output;
}

std::vector<cache::TierKey> keys_of(const Request& req) {
  std::vector<cache::BlockHash> chain;
  const cache::BlockHash seed = cache::chain_seed({*req.scope, fingerprint_of(*stories()), kB, req.cache_salt});
  cache::extend_chain(chain, seed, req.prompt, kB, cache::hash_block);
  std::vector<cache::TierKey> keys;
  for (const cache::BlockHash& h : chain) keys.push_back({*req.scope, h});
  return keys;
}

// Until `r` knows of every key (announced on the channel or found by its SCAN).
bool learns(const cache::RedisTier& r, const std::vector<cache::TierKey>& keys) {
  for (int i = 0; i < 500; ++i) {
    bool all = true;
    for (const cache::TierKey& k : keys) all = all && r.contains(k);
    if (all) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

class RedisReplicas : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisServer::available()) GTEST_SKIP() << "redis-server is not on PATH (apt-get install redis-server)";
    server_ = std::make_unique<RedisServer>();
  }
  std::unique_ptr<RedisServer> server_;
};

TEST_F(RedisReplicas, APrefixComputedOnOneIsRestoredOnAnother) {
  auto model = stories();
  const Request req = greedy(prompt(100, 21), 8);  // six full blocks and four tokens
  Tokens first;
  {
    Replica a(model, server_->port());
    first = run_one(*a.sched, req).output;
    a.sched->settle_tiers();
    a.redis->flush();
    EXPECT_EQ(a.redis->stats().tier.persisted, 6);
  }  // A is taken down
  Replica b(model, server_->port());
  ASSERT_TRUE(learns(*b.redis, keys_of(req)));
  const RequestResult again = run_one(*b.sched, req);
  EXPECT_EQ(again.output, cache_off(req));
  EXPECT_EQ(again.output, first);
  EXPECT_EQ(again.cached_tokens, 96);
  EXPECT_EQ(again.cached_disk_tokens, 96);  // the store below the host
  EXPECT_EQ(again.prompt_tokens, again.cached_tokens + again.fresh_prefill_tokens);
  EXPECT_EQ(b.sched->restores().blocks_from_disk, 6);
  EXPECT_EQ(b.redis->stats().tier.hits, 6);
}

TEST_F(RedisReplicas, TwoTenantsNeverShareABlockThroughRedis) {
  auto model = stories();
  const Tokens p = prompt(96, 22);
  Replica a(model, server_->port());
  Replica b(model, server_->port());
  run_one(*a.sched, greedy(p, 4, {1, 1}));
  a.sched->settle_tiers();
  a.redis->flush();
  ASSERT_TRUE(learns(*b.redis, keys_of(greedy(p, 4, {1, 1}))));
  const Request other = greedy(p, 4, {2, 2});
  const RequestResult r = run_one(*b.sched, other);
  EXPECT_EQ(r.cached_tokens, 0);
  EXPECT_EQ(b.sched->restores().blocks_from_host + b.sched->restores().blocks_from_disk, 0);
  EXPECT_EQ(b.redis->stats().tier.hits, 0);
  EXPECT_EQ(r.output, cache_off(other));
}

TEST_F(RedisReplicas, ADamagedRecordInRedisIsACountedMiss) {
  auto model = stories();
  const Request req = greedy(prompt(96, 23), 6);
  Replica a(model, server_->port());
  run_one(*a.sched, req);
  a.sched->settle_tiers();
  a.redis->flush();
  const std::vector<cache::TierKey> keys = keys_of(req);
  std::optional<std::vector<std::byte>> rec = a.redis->get(keys[2]);
  ASSERT_TRUE(rec);
  (*rec)[rec->size() - 7] ^= std::byte{4};
  ASSERT_TRUE(a.redis->put_raw_for_test(keys[2], *rec));

  Replica b(model, server_->port());
  ASSERT_TRUE(learns(*b.redis, keys));
  const RequestResult again = run_one(*b.sched, req);
  EXPECT_EQ(again.output, cache_off(req));
  EXPECT_EQ(again.cached_tokens, 2 * kB);  // the first two blocks; the third is damaged
  EXPECT_EQ(b.redis->stats().tier.faults.at("payload_checksum"), 1);
}

TEST_F(RedisReplicas, ADeadRedisIsOnlyAColdCache) {
  auto model = stories();
  const Request req = greedy(prompt(96, 24), 6);
  Replica a(model, server_->port());
  server_->kill();
  const RequestResult r = run_one(*a.sched, req);
  EXPECT_EQ(r.output, cache_off(req));
  a.sched->settle_tiers();
  a.redis->flush();
  EXPECT_GT(a.redis->stats().tier.write_errors, 0);
}

}  // namespace
}  // namespace kvgate
