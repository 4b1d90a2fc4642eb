// The prefix cache with tiers below the device pool: a device pool so small
// that hits come from host memory or RocksDB, and every output equal to the
// cache-off output; no restore across scopes; a damaged record is a miss,
// counted; preemption resumes by restoring; the disk tier warm after a
// restart.
#include <gtest/gtest.h>

#include <memory>

#include "cache/tiers/disk_tier.h"
#include "cache/tiers/host_tier.h"
#include "engine/sched/tier_identity.h"
#include "tests/engine/sched/prefix_support.h"
#include "tests/temp_dir.h"

namespace kvgate {
namespace {

using namespace prefix_testing;

constexpr int32_t kB = 16;

cache::KvIdentity identity_of(const std::shared_ptr<const Model>& m) {
  cache::KvIdentity id;
  id.model = fingerprint_of(*m);
  id.n_layers = m->config().n_layers;
  id.n_kv_heads = m->config().n_kv_heads;
  id.head_dim = m->config().head_dim;
  id.kv_type = static_cast<uint8_t>(KvType::kF32);
  id.block_size = kB;
  return id;
}

int64_t record_bytes_of(const std::shared_ptr<const Model>& m) {
  return static_cast<int64_t>(cache::record_bytes(identity_of(m)));
}

std::shared_ptr<cache::HostTier> host_tier(const std::shared_ptr<const Model>& m, int32_t blocks) {
  return std::make_shared<cache::HostTier>(blocks * record_bytes_of(m), identity_of(m));
}

std::shared_ptr<cache::DiskTier> disk_tier(const std::shared_ptr<const Model>& m, const std::string& dir,
                                           int32_t blocks = 4096) {
  cache::DiskTierOptions o;
  o.dir = dir;
  o.capacity_bytes = blocks * record_bytes_of(m);
  o.identity = identity_of(m);
  return cache::DiskTier::open(std::move(o));
}

Tokens prompt(size_t n, uint32_t salt) { return some_tokens(n, stories()->config().vocab_size, salt); }

// Runs `req` on a scheduler without any cache: the reference output.
Tokens cache_off(const Request& req) {
  auto s = make_prefix_scheduler(stories(), {.block_size = kB, .prefix_cache = false});
  return run_one(*s, req).output;
}

// Fills the device pool with other prompts so that `victim`'s blocks are evicted from it.
void flush_device(Scheduler& s, uint32_t salt, int n = 4) {
  for (int i = 0; i < n; ++i) run_one(s, greedy(prompt(96, salt + static_cast<uint32_t>(i)), 1));
  s.settle_tiers();
}

TEST(PrefixTiers, AHitFromTheHostTierGivesTheCacheOffOutput) {
  auto model = stories();
  auto host = host_tier(model, 256);
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .tiers = {host, nullptr}});
  const Request req = greedy(prompt(96, 7), 8);
  const RequestResult first = run_one(*s, req);
  EXPECT_EQ(first.cached_tokens, 0);
  s->settle_tiers();
  EXPECT_GE(host->stats().blocks, 6);  // every full block went down at commit
  flush_device(*s, 100);

  const RequestResult again = run_one(*s, req);
  EXPECT_EQ(again.output, cache_off(req));
  EXPECT_EQ(again.output, first.output);
  EXPECT_EQ(again.cached_tokens, 95);  // a whole-prompt hit recomputes its last position
  EXPECT_EQ(again.cached_host_tokens, 95);
  EXPECT_EQ(again.cached_disk_tokens, 0);
  EXPECT_EQ(again.prompt_tokens, again.cached_tokens + again.fresh_prefill_tokens);
  EXPECT_EQ(s->restores().blocks_from_host, 6);
}

TEST(PrefixTiers, AHitFromTheDiskTierGivesTheCacheOffOutput) {
  auto model = stories();
  testing::TempDir dir;
  auto host = host_tier(model, 2);  // too small to keep the prompt: it comes back from RocksDB
  auto disk = disk_tier(model, (dir.path() / "kv").string());
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .tiers = {host, disk}});
  const Request req = greedy(prompt(100, 8), 8);  // six full blocks and four tokens: a partial hit
  const RequestResult first = run_one(*s, req);
  flush_device(*s, 200);
  disk->flush();
  ASSERT_GE(disk->stats().persisted, 6);

  const RequestResult again = run_one(*s, req);
  EXPECT_EQ(again.output, cache_off(req));
  EXPECT_EQ(again.output, first.output);
  EXPECT_EQ(again.cached_tokens, 96);
  EXPECT_GT(again.cached_disk_tokens, 0);
  EXPECT_EQ(again.cached_host_tokens + again.cached_disk_tokens, 96);
  EXPECT_GT(s->restores().blocks_from_disk, 0);
}

TEST(PrefixTiers, NoTierHandsABlockToAnotherScope) {
  auto model = stories();
  testing::TempDir dir;
  auto host = host_tier(model, 256);
  auto disk = disk_tier(model, (dir.path() / "kv").string());
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .tiers = {host, disk}});
  const Tokens p = prompt(96, 9);
  run_one(*s, greedy(p, 4, {1, 1}));
  flush_device(*s, 300);
  disk->flush();
  const RequestResult other = run_one(*s, greedy(p, 4, {2, 2}));
  EXPECT_EQ(other.cached_tokens, 0);
  EXPECT_EQ(s->restores().blocks_from_host + s->restores().blocks_from_disk, 0);
  EXPECT_EQ(other.output, cache_off(greedy(p, 4, {2, 2})));
}

TEST(PrefixTiers, AFlippedByteInTheHostTierIsAMissAndCounted) {
  auto model = stories();
  auto host = host_tier(model, 256);
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .tiers = {host, nullptr}});
  const Request req = greedy(prompt(96, 10), 8);
  run_one(*s, req);
  flush_device(*s, 400);
  // Damage the third block's record: the first two still restore.
  std::vector<cache::BlockHash> chain;
  const cache::BlockHash seed = cache::chain_seed({*req.scope, fingerprint_of(*model), kB, req.cache_salt});
  cache::extend_chain(chain, seed, req.prompt, kB, cache::hash_block);
  ASSERT_TRUE(host->mutate_for_test({*req.scope, chain[2]}, [](std::span<std::byte> b) { b[b.size() - 5] ^= std::byte{1}; }));

  const RequestResult again = run_one(*s, req);
  EXPECT_EQ(again.output, cache_off(req));
  EXPECT_EQ(again.cached_tokens, 2 * kB);
  EXPECT_EQ(host->stats().faults.at("payload_checksum"), 1);
  EXPECT_EQ(s->restores().faults, 1);
}

TEST(PrefixTiers, APreemptedSequenceResumesByRestoringItsBlocks) {
  auto model = stories();
  auto host = host_tier(model, 1024);
  // 24 blocks for eight 96-token prompts generating 40 tokens each (9 blocks
  // apiece): sequences are preempted. After each preemption the device's
  // unreferenced blocks are flushed (as another tenant's traffic would), so
  // the preempted sequences can only resume from the host tier.
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 24, .max_step_tokens = 128,
                                         .tiers = {host, nullptr}});
  std::vector<Request> reqs;
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (uint32_t i = 0; i < 8; ++i) {
    reqs.push_back(greedy(prompt(96, 500 + i), 40));
    streams.push_back(s->submit(reqs.back(), {.tenant = 1}));
  }
  while (!s->idle()) {
    if (s->step().preempted > 0) {
      s->settle_tiers();
      s->evict_tenant(1, false);
    }
    s->check_invariants();
  }
  int32_t restored = 0, preemptions = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const RequestResult r = streams[i]->wait().result;
    EXPECT_EQ(r.output, cache_off(reqs[i])) << "request " << i;
    restored += r.resumed_restored_tokens;
    preemptions += r.preemptions;
  }
  ASSERT_GT(preemptions, 0);
  EXPECT_GT(restored, 0);
  EXPECT_EQ(s->restores().resumed_restored_tokens, restored);
  // Only partial blocks were recomputed: less than a block per resumption.
  EXPECT_LT(s->restores().resumed_recomputed_tokens, preemptions * kB);
}

TEST(PrefixTiers, TheDiskTierIsWarmAfterARestart) {
  auto model = stories();
  testing::TempDir dir;
  const Request req = greedy(prompt(128, 11), 8);
  Tokens first;
  {
    auto disk = disk_tier(model, (dir.path() / "kv").string());
    auto s = make_prefix_scheduler(model, {.block_size = kB, .tiers = {nullptr, disk}});
    first = run_one(*s, req).output;
    s->settle_tiers();
    disk->flush();
    EXPECT_EQ(disk->stats().persisted, 8);
  }
  auto disk = disk_tier(model, (dir.path() / "kv").string());
  EXPECT_EQ(disk->stats().blocks, 8);
  auto s = make_prefix_scheduler(model, {.block_size = kB, .tiers = {nullptr, disk}});
  const RequestResult again = run_one(*s, req);
  EXPECT_EQ(again.output, first);
  EXPECT_EQ(again.cached_disk_tokens, 127);
}

}  // namespace
}  // namespace kvgate
