// The prefix cache with tiers below the device pool: a device pool so small
// that hits come from host memory or RocksDB, and every output equal to the
// cache-off output; no restore across scopes; a damaged record is a miss,
// counted; preemption resumes by restoring; the disk tier warm after a
// restart.
#include <gtest/gtest.h>

#include <rocksdb/env.h>

#include <atomic>
#include <functional>
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

cache::KvIdentity identity_of(const std::shared_ptr<const Model>& m) { return tier_identity_of(*m, kB); }

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
  EXPECT_EQ(again.cached_device_tokens, 0);
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

// One prompt whose cached blocks come from every tier: the first two hit in
// the device pool, the next two come back from the disk, the last two from
// the host tier. Each tier is credited its own blocks' tokens, counted where
// the scheduler splits the hits (the usage every output carries).
TEST(PrefixTiers, OnePromptFromEveryTierCountsEachTiersTokens) {
  auto model = stories();
  testing::TempDir dir;
  auto host = host_tier(model, 256);
  auto disk = disk_tier(model, (dir.path() / "kv").string());
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .tiers = {host, disk}});
  const Request req = greedy(prompt(100, 11), 4);  // six full blocks and four tokens
  const RequestResult first = run_one(*s, req);
  flush_device(*s, 500);
  disk->flush();
  ASSERT_GE(disk->stats().persisted, 6);
  // Blocks 2 and 3 leave the host tier (as damaged records would): below the
  // device, only the disk still has them.
  std::vector<cache::BlockHash> chain;
  const cache::BlockHash seed = cache::chain_seed({*req.scope, fingerprint_of(*model), kB, req.cache_salt});
  cache::extend_chain(chain, seed, req.prompt, kB, cache::hash_block);
  for (size_t i : {2, 3}) host->drop_corrupt({*req.scope, chain[i]}, cache::RecordFault::kPayloadChecksum);
  // The prompt's first two blocks and one more token: blocks 0 and 1 come
  // back into the device pool and stay cached there.
  run_one(*s, greedy(Tokens(req.prompt.begin(), req.prompt.begin() + 2 * kB + 1), 1));

  const RequestResult again = run_one(*s, req);
  EXPECT_EQ(again.output, first.output);
  EXPECT_EQ(again.cached_tokens, 6 * kB);
  EXPECT_EQ(again.cached_device_tokens, 2 * kB);
  EXPECT_EQ(again.cached_disk_tokens, 2 * kB);
  EXPECT_EQ(again.cached_host_tokens, 2 * kB);
  EXPECT_EQ(again.fresh_prefill_tokens, 4);
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

// A restore checks and copies a whole run at once (over the OpenMP team):
// every bad record in it is dropped, the chain stops at the first, and the
// device blocks copied past it go back to the pool.
TEST(PrefixTiers, EveryBadRecordOfARestoredRunIsDroppedAndNoDeviceBlockLeaks) {
  auto model = stories();
  auto host = host_tier(model, 256);
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .tiers = {host, nullptr}});
  const Request req = greedy(prompt(96, 12), 8);
  run_one(*s, req);
  flush_device(*s, 400);
  const int32_t free_before = s->pool().available();
  std::vector<cache::BlockHash> chain;
  const cache::BlockHash seed = cache::chain_seed({*req.scope, fingerprint_of(*model), kB, req.cache_salt});
  cache::extend_chain(chain, seed, req.prompt, kB, cache::hash_block);
  for (const size_t i : {size_t{1}, size_t{4}})
    ASSERT_TRUE(host->mutate_for_test({*req.scope, chain[i]}, [](std::span<std::byte> b) { b[b.size() - 9] ^= std::byte{4}; }));

  const RequestResult again = run_one(*s, req);
  EXPECT_EQ(again.output, cache_off(req));
  EXPECT_EQ(again.cached_tokens, kB) << "the chain stops at its first bad block";
  EXPECT_EQ(host->stats().faults.at("payload_checksum"), 2) << "both bad records were dropped";
  EXPECT_EQ(s->restores().faults, 2);
  EXPECT_EQ(s->restores().blocks_from_host, 1);
  flush_device(*s, 400);
  EXPECT_EQ(s->pool().available(), free_before) << "a device block copied past the bad record was not given back";
}

// A tenant's cache quota bounds what a restore commits, as it bounds
// what a prefill commits.
TEST(PrefixTiers, ARestoreStaysWithinTheTenantsCacheQuota) {
  auto model = stories();
  auto host = host_tier(model, 256);
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 16, .tiers = {host, nullptr}});
  const Request req = greedy(prompt(96, 13), 4);
  run_one(*s, req);  // no quota: all 6 blocks go down to the host tier
  flush_device(*s, 400);
  const RequestResult capped = run_one(*s, req, {1, 0, /*cache_quota_blocks=*/3});
  EXPECT_EQ(capped.output, cache_off(req));
  EXPECT_LE(s->pool().cached_blocks(1), 3);
  EXPECT_LE(capped.cached_tokens, 3 * kB);
  EXPECT_GT(capped.cached_host_tokens, 0);
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

// The prompt's chain under its scope, as the scheduler hashes it.
std::vector<cache::BlockHash> chain_of(const Request& req) {
  std::vector<cache::BlockHash> chain;
  const cache::BlockHash seed = cache::chain_seed({*req.scope, fingerprint_of(*stories()), kB, req.cache_salt});
  cache::extend_chain(chain, seed, req.prompt, kB, cache::hash_block);
  return chain;
}

// A record of the prompt's first block as the disk tier holds it, damaged by
// `damage` (which may also seal it under another identity), planted in place
// of the good one: the request must miss from that block on, and the disk
// tier must count the fault under its name.
struct Damage {
  const char* fault;
  std::function<void(std::vector<std::byte>& record, const cache::BlockKey& key, std::span<const TokenId> tokens)> apply;
};

class DamagedDiskRecord : public ::testing::TestWithParam<Damage> {};

TEST_P(DamagedDiskRecord, IsAMissNeverServedAndCounted) {
  auto model = stories();
  testing::TempDir dir;
  auto disk = disk_tier(model, (dir.path() / "kv").string());
  const Request req = greedy(prompt(100, 12), 6);
  {
    auto s = make_prefix_scheduler(model, {.block_size = kB, .tiers = {nullptr, disk}});
    run_one(*s, req);
    s->settle_tiers();
    disk->flush();
  }
  const std::vector<cache::BlockHash> chain = chain_of(req);
  const cache::BlockKey key{chain[0], cache::chain_seed({*req.scope, fingerprint_of(*model), kB, req.cache_salt}),
                            *req.scope, 0};
  const std::span<const TokenId> tokens = std::span(req.prompt).first(kB);
  std::optional<std::vector<std::byte>> record = disk->get({key.scope, key.hash});
  ASSERT_TRUE(record);
  ASSERT_EQ(cache::check_record(*record, key, tokens, identity_of(model)), cache::RecordFault::kNone);
  GetParam().apply(*record, key, tokens);
  disk->put_raw_for_test({key.scope, key.hash}, *record, 0, 0);

  auto s = make_prefix_scheduler(model, {.block_size = kB, .tiers = {nullptr, disk}});  // a cold device
  const RequestResult again = run_one(*s, req);
  EXPECT_EQ(again.cached_tokens, 0);
  EXPECT_EQ(again.output, cache_off(req));
  const cache::TierStats st = disk->stats();
  ASSERT_TRUE(st.faults.contains(GetParam().fault)) << "no fault counted as " << GetParam().fault;
  EXPECT_EQ(st.faults.at(GetParam().fault), 1);
  // Dropped, and the block the request recomputed written back in its place
  // (once the copy down it started is done).
  s->settle_tiers();
  disk->flush();
  const std::optional<std::vector<std::byte>> fresh = disk->get({key.scope, key.hash});
  ASSERT_TRUE(fresh);
  EXPECT_EQ(cache::check_record(*fresh, key, tokens, identity_of(model)), cache::RecordFault::kNone);
}

// Seals the record again under an identity changed by `edit`: the bytes are
// those of a well-formed block of another model or layout.
void reseal(std::vector<std::byte>& record, const cache::BlockKey& key, std::span<const TokenId> tokens,
            const std::function<void(cache::KvIdentity&)>& edit) {
  cache::KvIdentity other = identity_of(stories());
  edit(other);
  std::vector<std::byte> r(cache::record_bytes(other));
  const std::span<const std::byte> old = cache::record_payload(std::span<const std::byte>(record), identity_of(stories()));
  const std::span<std::byte> payload = cache::record_payload(std::span(r), other);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = old[i % old.size()];
  std::vector<TokenId> toks(tokens.begin(), tokens.end());
  toks.resize(static_cast<size_t>(other.block_size), 0);
  cache::seal_record(r, key, 0, other, toks);
  record = std::move(r);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, DamagedDiskRecord,
    ::testing::Values(
        Damage{"payload_checksum", [](auto& r, auto&, auto) { r[r.size() - 100] ^= std::byte{0x40}; }},
        Damage{"truncated", [](auto& r, auto&, auto) { r.resize(r.size() / 2); }},
        Damage{"wrong_model", [](auto& r, auto& k, auto toks) { reseal(r, k, toks, [](auto& id) { id.model.lo ^= 1; }); }},
        Damage{"wrong_block_size",
               [](auto& r, auto& k, auto toks) { reseal(r, k, toks, [](auto& id) { id.block_size = 32; }); }},
        Damage{"wrong_type", [](auto& r, auto& k, auto toks) { reseal(r, k, toks, [](auto& id) { id.kv_type = 1; }); }}),
    [](const auto& param_info) { return std::string(param_info.param.fault); });

// A full disk: every write to the disk tier fails. Requests are served as
// before (from the host tier and the device), the failures counted.
class FullDisk : public rocksdb::EnvWrapper {
 public:
  FullDisk() : EnvWrapper(rocksdb::Env::Default()) {}
  const char* Name() const override { return "KvgateFullDisk"; }
  std::atomic<bool> full{false};
  rocksdb::Status NewWritableFile(const std::string& f, std::unique_ptr<rocksdb::WritableFile>* r,
                                  const rocksdb::EnvOptions& o) override {
    rocksdb::Status st = target()->NewWritableFile(f, r, o);
    if (st.ok()) *r = std::make_unique<File>(std::move(*r), full);
    return st;
  }

 private:
  class File : public rocksdb::WritableFileWrapper {
   public:
    File(std::unique_ptr<rocksdb::WritableFile> t, std::atomic<bool>& full)
        : WritableFileWrapper(t.get()), own_(std::move(t)), full_(full) {}
    rocksdb::Status Append(const rocksdb::Slice& d) override {
      return full_ ? rocksdb::Status::NoSpace("injected: no space left on device") : WritableFileWrapper::Append(d);
    }
    rocksdb::Status Append(const rocksdb::Slice& d, const rocksdb::DataVerificationInfo& v) override {
      return full_ ? rocksdb::Status::NoSpace("injected: no space left on device") : WritableFileWrapper::Append(d, v);
    }

   private:
    std::unique_ptr<rocksdb::WritableFile> own_;
    std::atomic<bool>& full_;
  };
};

TEST(PrefixTiers, AFullDiskLeavesTheServerServing) {
  auto model = stories();
  testing::TempDir dir;
  FullDisk env;
  cache::DiskTierOptions o;
  o.dir = (dir.path() / "kv").string();
  o.capacity_bytes = 4096 * record_bytes_of(model);
  o.identity = identity_of(model);
  o.env = &env;
  o.retry_interval = std::chrono::milliseconds(0);
  auto disk = std::shared_ptr<cache::DiskTier>(cache::DiskTier::open(std::move(o)));
  auto host = host_tier(model, 256);
  auto s = make_prefix_scheduler(model, {.block_size = kB, .n_blocks = 12, .tiers = {host, disk}});
  env.full = true;
  for (uint32_t i = 0; i < 6; ++i) {
    const Request req = greedy(prompt(100, 600 + i), 4);
    EXPECT_EQ(run_one(*s, req).output, cache_off(req)) << "request " << i;
  }
  s->settle_tiers();
  disk->flush();
  EXPECT_GT(disk->stats().write_errors, 0);
  EXPECT_EQ(disk->stats().persisted, 0);
  // Served from the host tier meanwhile; once there is room again, written.
  const Request first = greedy(prompt(100, 600), 4);
  EXPECT_EQ(run_one(*s, first).cached_host_tokens, 96);
  env.full = false;
  const Request later = greedy(prompt(100, 700), 4);
  EXPECT_EQ(run_one(*s, later).output, cache_off(later));
  s->settle_tiers();
  disk->flush();
  EXPECT_GE(disk->stats().persisted, 6);
}

}  // namespace
}  // namespace kvgate
