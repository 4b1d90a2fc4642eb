#include "cache/tiers/disk_tier.h"

#include <gtest/gtest.h>
#include <rocksdb/env.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "policies/eviction/policy_registry.h"
#include "tests/cache/tiers/tier_test_support.h"
#include "tests/temp_dir.h"

namespace kvgate::cache {
namespace {

namespace fs = std::filesystem;
using testing::key_at;
using testing::record_for;
using testing::scope_of;
using testing::small_identity;
using testing::tier_key;
using testing::verify;

const size_t kRec = record_bytes(small_identity());

DiskTierOptions options(const std::string& dir, int64_t capacity_records = 1000, KvIdentity id = small_identity()) {
  DiskTierOptions o;
  o.dir = dir;
  o.capacity_bytes = capacity_records * static_cast<int64_t>(record_bytes(id));
  o.identity = id;
  return o;
}

bool put(DiskTier& tier, TenantId t, int32_t i) { return tier.enqueue(record_for(key_at(scope_of(t), i), t, tier.identity()), t); }
TierKey key(TenantId t, int32_t i) { return tier_key(key_at(scope_of(t), i)); }

RecordFault read_back(DiskTier& tier, TenantId t, int32_t i) {
  const std::optional<std::vector<std::byte>> r = tier.get(key(t, i));
  if (!r) return RecordFault::kTruncated;  // tests below only call it for keys they expect
  return verify(*r, key_at(scope_of(t), i), tier.identity());
}

// An Env whose writable files fail every append while `fail` is set (a
// full disk), and whose WAL appends wait while `hold` is set (a slow disk).
class FaultEnv : public rocksdb::EnvWrapper {
 public:
  FaultEnv() : EnvWrapper(rocksdb::Env::Default()) {}
  const char* Name() const override { return "KvgateFaultEnv"; }

  std::atomic<bool> fail{false};
  std::atomic<int64_t> failed_appends{0};

  void hold(bool on) {
    {
      std::lock_guard l(mu_);
      hold_ = on;
    }
    cv_.notify_all();
  }
  // Waits until an append is held (the writer is inside a write).
  void wait_held() {
    std::unique_lock l(mu_);
    cv_.wait(l, [&] { return waiting_ > 0; });
  }

  rocksdb::Status NewWritableFile(const std::string& f, std::unique_ptr<rocksdb::WritableFile>* r,
                                  const rocksdb::EnvOptions& o) override {
    rocksdb::Status s = target()->NewWritableFile(f, r, o);
    if (s.ok()) *r = std::make_unique<File>(std::move(*r), this, f.ends_with(".log"));
    return s;
  }

 private:
  class File : public rocksdb::WritableFileWrapper {
   public:
    File(std::unique_ptr<rocksdb::WritableFile> t, FaultEnv* env, bool wal)
        : WritableFileWrapper(t.get()), own_(std::move(t)), env_(env), wal_(wal) {}
    rocksdb::Status Append(const rocksdb::Slice& d) override {
      if (auto s = gate(); !s.ok()) return s;
      return WritableFileWrapper::Append(d);
    }
    rocksdb::Status Append(const rocksdb::Slice& d, const rocksdb::DataVerificationInfo& v) override {
      if (auto s = gate(); !s.ok()) return s;
      return WritableFileWrapper::Append(d, v);
    }
    rocksdb::Status PositionedAppend(const rocksdb::Slice& d, uint64_t off) override {
      if (auto s = gate(); !s.ok()) return s;
      return WritableFileWrapper::PositionedAppend(d, off);
    }

   private:
    rocksdb::Status gate() {
      if (wal_) {
        std::unique_lock l(env_->mu_);
        if (env_->hold_) {
          ++env_->waiting_;
          env_->cv_.notify_all();
          env_->cv_.wait(l, [&] { return !env_->hold_; });
          --env_->waiting_;
        }
      }
      if (env_->fail) {
        ++env_->failed_appends;
        return rocksdb::Status::NoSpace("injected: no space left on device");
      }
      return rocksdb::Status::OK();
    }
    std::unique_ptr<rocksdb::WritableFile> own_;
    FaultEnv* env_;
    bool wal_;
  };

  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  int waiting_ = 0;
};

TEST(DiskTier, EnqueueFlushGet) {
  kvgate::testing::TempDir tmp;
  std::unique_ptr<DiskTier> tier = DiskTier::open(options(tmp.sub("kv")));
  EXPECT_EQ(tier->dir(), tmp.sub("kv"));
  EXPECT_TRUE(tier->moved_aside_to().empty());
  for (int32_t i = 0; i < 5; ++i) EXPECT_TRUE(put(*tier, 1, i));
  for (int32_t i = 0; i < 2; ++i) EXPECT_TRUE(put(*tier, 2, i));
  EXPECT_FALSE(put(*tier, 1, 0)) << "already queued or stored";
  tier->flush();
  EXPECT_FALSE(put(*tier, 1, 0)) << "already stored";
  for (int32_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(tier->contains(key(1, i)));
    EXPECT_EQ(read_back(*tier, 1, i), RecordFault::kNone);
  }
  EXPECT_FALSE(tier->get(key(1, 9)));
  EXPECT_FALSE(tier->get(TierKey{scope_of(2), key(1, 0).hash})) << "the same hash in another scope";
  const TierStats st = tier->stats();
  EXPECT_EQ(st.stored, 7);
  EXPECT_EQ(st.persisted, 7);
  EXPECT_EQ(st.blocks, 7);
  EXPECT_EQ(st.used_bytes, static_cast<int64_t>(7 * kRec));
  EXPECT_EQ(st.hits, 5);
  EXPECT_EQ(st.misses, 2);
  EXPECT_EQ(st.queued, 0);
  EXPECT_EQ(st.refused, 0);
  EXPECT_EQ(st.tenant_blocks.at(1), 5);
  EXPECT_EQ(st.tenant_blocks.at(2), 2);
  EXPECT_EQ(tier->policy_name(), "lru");
}

TEST(DiskTier, EnqueueRefusesWhatItCannotStore) {
  kvgate::testing::TempDir tmp;
  std::unique_ptr<DiskTier> tier = DiskTier::open(options(tmp.sub("kv")));
  std::vector<std::byte> rec = record_for(key_at(scope_of(1), 0), 1, small_identity());
  rec[20] ^= std::byte{1};
  EXPECT_FALSE(tier->enqueue(rec, 1)) << "not a sealed record";
  KvIdentity other = small_identity();
  other.block_size = 8;
  EXPECT_FALSE(tier->enqueue(record_for(key_at(scope_of(1), 0), 1, other), 1)) << "another identity";
  EXPECT_EQ(tier->stats().refused, 2);
  EXPECT_THROW(DiskTier::open(options("")), std::invalid_argument);
  KvIdentity bad = small_identity();
  bad.kv_type = 9;
  EXPECT_THROW(DiskTier::open(options(tmp.sub("bad"), 10, bad)), std::invalid_argument);
}

TEST(DiskTier, ReopenRebuildsTheIndexAndIgnoresForeignEntries) {
  kvgate::testing::TempDir tmp;
  const std::string dir = tmp.sub("kv");
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));
    for (int32_t i = 0; i < 6; ++i) ASSERT_TRUE(put(*tier, 3, i));
  }  // the destructor writes what is queued
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));
    const TierStats st = tier->stats();
    EXPECT_EQ(st.blocks, 6);
    EXPECT_EQ(st.persisted, 0) << "counted since open";
    EXPECT_EQ(st.foreign, 0);
    EXPECT_EQ(st.tenant_blocks.at(3), 6);
    for (int32_t i = 0; i < 6; ++i) EXPECT_EQ(read_back(*tier, 3, i), RecordFault::kNone);
  }
  KvIdentity other = small_identity();
  other.model.lo ^= 0xff;  // another model
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir, 1000, other));
    const TierStats st = tier->stats();
    EXPECT_EQ(st.blocks, 0);
    EXPECT_EQ(st.foreign, 6);
    EXPECT_FALSE(tier->contains(key(3, 0)));
    EXPECT_FALSE(tier->get(key(3, 0)));
    EXPECT_TRUE(tier->enqueue(record_for(key_at(scope_of(3), 0), 3, other), 3)) << "its own, under the same key";
    tier->flush();
    EXPECT_EQ(tier->stats().blocks, 1);
  }
  {
    // Back to the first identity: key (3, 0) is now the other model's, foreign.
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));
    EXPECT_EQ(tier->stats().blocks, 5);
    EXPECT_EQ(tier->stats().foreign, 1);
    EXPECT_EQ(tier->purge_foreign(), 1);
    EXPECT_EQ(tier->stats().foreign, 0);
    EXPECT_EQ(tier->stats().blocks, 5);
  }
  std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir, 1000, other));
  EXPECT_EQ(tier->stats().foreign, 5);
  EXPECT_EQ(tier->stats().blocks, 0);
}

TEST(DiskTier, PurgeAllAndOfflinePurge) {
  kvgate::testing::TempDir tmp;
  const std::string dir = tmp.sub("kv");
  KvIdentity other = small_identity();
  other.kv_type = 2;
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));
    for (int32_t i = 0; i < 4; ++i) ASSERT_TRUE(put(*tier, 1, i));
    tier->flush();
    EXPECT_EQ(tier->purge_all(), 4);
    EXPECT_EQ(tier->stats().blocks, 0);
    EXPECT_EQ(tier->stats().used_bytes, 0);
    EXPECT_FALSE(tier->get(key(1, 0)));
    for (int32_t i = 0; i < 4; ++i) ASSERT_TRUE(put(*tier, 1, i)) << "the keys are free again";
    tier->flush();
    EXPECT_THROW(purge_disk_tier(dir, nullptr), std::runtime_error) << "locked by the open tier";
    try {
      purge_disk_tier(dir, nullptr);
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
    }
  }
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir, 1000, other));
    for (int32_t i = 0; i < 3; ++i) ASSERT_TRUE(tier->enqueue(record_for(key_at(scope_of(2), i), 2, other), 2));
  }
  const KvIdentity keep = small_identity();
  EXPECT_EQ(purge_disk_tier(dir, &keep), 3);
  EXPECT_EQ(purge_disk_tier(dir, &keep), 0);
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));
    EXPECT_EQ(tier->stats().blocks, 4);
    EXPECT_EQ(tier->stats().foreign, 0);
  }
  EXPECT_EQ(purge_disk_tier(dir, nullptr), 4);
  EXPECT_EQ(DiskTier::open(options(dir))->stats().blocks, 0);
  EXPECT_EQ(purge_disk_tier(tmp.sub("nothing-here"), nullptr), 0);
  EXPECT_FALSE(fs::exists(tmp.sub("nothing-here")));
}

TEST(DiskTier, CapacityEvictsByThePolicy) {
  kvgate::testing::TempDir tmp;
  const std::string dir = tmp.sub("kv");
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir, 3));
    for (int32_t i = 0; i < 3; ++i) ASSERT_TRUE(put(*tier, 1, i));
    tier->flush();
    ASSERT_TRUE(tier->get(key(1, 0)));  // 0 is now the most recently used
    ASSERT_TRUE(put(*tier, 1, 3));
    ASSERT_TRUE(put(*tier, 1, 4));
    tier->flush();
    const TierStats st = tier->stats();
    EXPECT_EQ(st.blocks, 3);
    EXPECT_EQ(st.evicted, 2);
    EXPECT_LE(st.used_bytes, st.capacity_bytes);
    EXPECT_FALSE(tier->contains(key(1, 1)));
    EXPECT_FALSE(tier->contains(key(1, 2)));
    EXPECT_FALSE(tier->get(key(1, 1)));
    EXPECT_TRUE(tier->contains(key(1, 0)));
    EXPECT_TRUE(tier->contains(key(1, 4)));
  }
  {
    // The evicted ones are gone from the database too; a smaller capacity evicts at open.
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir, 2));
    EXPECT_EQ(tier->stats().blocks, 2);
    EXPECT_EQ(tier->stats().evicted, 1);
  }
  EXPECT_EQ(DiskTier::open(options(dir, 10))->stats().blocks, 2);
}

TEST(DiskTier, PlantedDamageIsRejectedAndDropped) {
  kvgate::testing::TempDir tmp;
  const std::string dir = tmp.sub("kv");
  const KvIdentity id = small_identity();
  std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));
  auto plant = [&](int32_t i, std::vector<std::byte> value) {
    tier->put_raw_for_test(key(1, i), value, 1, i);
  };
  std::vector<std::byte> good = record_for(key_at(scope_of(1), 0), 1, id);
  std::vector<std::byte> v = good;
  v[v.size() / 2 + 100] ^= std::byte{4};
  plant(0, v);
  v = record_for(key_at(scope_of(1), 1), 1, id);
  v.resize(v.size() - 64);
  plant(1, v);
  KvIdentity wrong = id;
  wrong.model.hi ^= 1;
  plant(2, record_for(key_at(scope_of(1), 2), 1, wrong));
  wrong = id;
  wrong.block_size = 8;
  plant(3, record_for(key_at(scope_of(1), 3), 1, wrong));
  wrong = id;
  wrong.kv_type = 0;
  plant(4, record_for(key_at(scope_of(1), 4), 1, wrong));
  plant(5, record_for(key_at(scope_of(1), 0), 1, id));  // block 0's record under block 5's key
  const RecordFault want[] = {RecordFault::kPayloadChecksum, RecordFault::kTruncated, RecordFault::kWrongModel,
                              RecordFault::kWrongBlockSize, RecordFault::kWrongType, RecordFault::kWrongKey};
  for (int32_t i = 0; i < 6; ++i) {
    ASSERT_TRUE(tier->contains(key(1, i)));
    const std::optional<std::vector<std::byte>> r = tier->get(key(1, i));
    ASSERT_TRUE(r);
    const RecordFault f = verify(*r, key_at(scope_of(1), i), id);
    EXPECT_EQ(f, want[i]) << "block " << i << ": " << fault_name(f);
    tier->drop_corrupt(key(1, i), f);
    tier->drop_corrupt(key(1, i), f);  // counted once
    EXPECT_FALSE(tier->contains(key(1, i)));
    EXPECT_FALSE(tier->get(key(1, i)));
  }
  const TierStats st = tier->stats();
  EXPECT_EQ(st.blocks, 0);
  for (const RecordFault f : want) EXPECT_EQ(st.faults.at(std::string(fault_name(f))), 1) << fault_name(f);
  tier.reset();
  EXPECT_EQ(DiskTier::open(options(dir))->stats().blocks, 0) << "dropped from the database, not only the index";
}

TEST(DiskTier, EvictTenantAndSetPolicy) {
  kvgate::testing::TempDir tmp;
  const std::string dir = tmp.sub("kv");
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir, 6));
    for (int32_t i = 0; i < 3; ++i) ASSERT_TRUE(put(*tier, 1, i));
    for (int32_t i = 0; i < 3; ++i) ASSERT_TRUE(put(*tier, 2, i));
    tier->flush();
    ASSERT_TRUE(tier->get(key(1, 0)));  // LRU: 1/1, 1/2, 2/0, 2/1, 2/2, 1/0
    tier->set_policy(policies::make_eviction_policy(policies::parse_policy_spec("lru")));
    EXPECT_EQ(tier->stats().blocks, 6);
    ASSERT_TRUE(put(*tier, 3, 0));
    tier->flush();
    EXPECT_FALSE(tier->contains(key(1, 1))) << "the old order carried over";
    EXPECT_EQ(tier->evict_tenant(2), 3);
    const TierStats st = tier->stats();
    EXPECT_EQ(st.blocks, 3);
    EXPECT_FALSE(st.tenant_blocks.contains(2));
    EXPECT_EQ(st.evicted, 4);
    tier->set_policy(policies::make_eviction_policy(policies::parse_policy_spec("s3fifo")));
    EXPECT_EQ(tier->policy_name(), "s3fifo");
    EXPECT_FALSE(tier->policy_params().empty());
    EXPECT_THROW(tier->set_policy(nullptr), std::invalid_argument);
  }
  std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));
  EXPECT_EQ(tier->stats().blocks, 3);
  EXPECT_FALSE(tier->stats().tenant_blocks.contains(2));
}

TEST(DiskTier, AFullQueueRefusesWithoutWaiting) {
  kvgate::testing::TempDir tmp;
  FaultEnv env;
  DiskTierOptions o = options(tmp.sub("kv"));
  o.env = &env;
  o.write_queue_bytes = 3 * kRec;
  std::unique_ptr<DiskTier> tier = DiskTier::open(std::move(o));
  env.hold(true);  // a disk that does not answer
  ASSERT_TRUE(put(*tier, 9, 0));
  env.wait_held();  // the writer is inside the write of 9/0
  EXPECT_TRUE(put(*tier, 1, 0));
  EXPECT_TRUE(put(*tier, 1, 1));
  EXPECT_FALSE(put(*tier, 1, 2)) << "three records waiting: full";
  EXPECT_FALSE(put(*tier, 1, 3)) << "and its tail is refused with it";
  EXPECT_EQ(tier->stats().queued, 3);
  EXPECT_EQ(tier->stats().refused, 2);
  EXPECT_EQ(read_back(*tier, 1, 1), RecordFault::kNone) << "a queued record is served from memory";
  EXPECT_TRUE(tier->contains(key(1, 1)));
  env.hold(false);
  tier->flush();
  EXPECT_EQ(tier->stats().persisted, 3);
  EXPECT_FALSE(put(*tier, 1, 3)) << "its parent was refused: still refused";
  EXPECT_TRUE(put(*tier, 1, 2));
  EXPECT_TRUE(put(*tier, 1, 3));
  tier->flush();
  EXPECT_EQ(tier->stats().persisted, 5);
}

TEST(DiskTier, WriteErrorsAreCountedAndTheTierRecovers) {
  kvgate::testing::TempDir tmp;
  const std::string dir = tmp.sub("kv");
  FaultEnv env;
  {
    DiskTierOptions o = options(dir);
    o.env = &env;
    o.retry_interval = std::chrono::milliseconds(0);  // reopen on the first write after the fault
    std::unique_ptr<DiskTier> tier = DiskTier::open(std::move(o));
    ASSERT_TRUE(put(*tier, 1, 0));
    tier->flush();
    env.fail = true;  // the disk is full
    // Chain heads of four tenants (a chain's tail would be refused once its head failed).
    for (TenantId t = 10; t < 14; ++t) EXPECT_TRUE(put(*tier, t, 0)) << "enqueue never waits on the disk";
    tier->flush();
    TierStats st = tier->stats();
    EXPECT_GE(st.write_errors, 1);
    EXPECT_EQ(st.persisted, 1);
    EXPECT_EQ(st.refused, 4);
    EXPECT_EQ(st.queued, 0);
    EXPECT_GT(env.failed_appends.load(), 0);
    for (TenantId t = 10; t < 14; ++t) EXPECT_FALSE(tier->contains(key(t, 0)));
    EXPECT_EQ(read_back(*tier, 1, 0), RecordFault::kNone) << "reads still work";

    env.fail = false;
    for (int32_t i = 0; i < 3; ++i) EXPECT_TRUE(put(*tier, 3, i));
    EXPECT_TRUE(put(*tier, 10, 0)) << "a failed key may be offered again";
    tier->flush();
    st = tier->stats();
    EXPECT_EQ(st.persisted, 5);
    for (int32_t i = 0; i < 3; ++i) EXPECT_EQ(read_back(*tier, 3, i), RecordFault::kNone);
  }
  std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));  // no faults: everything acknowledged is there
  EXPECT_EQ(tier->stats().blocks, 5);
  EXPECT_EQ(read_back(*tier, 10, 0), RecordFault::kNone);
}

// A write fails with a chain's head in it while the chain's tail waits in the
// queue behind it: the tail is never persisted without its head.
TEST(DiskTier, NoTailIsPersistedWithoutItsHead) {
  kvgate::testing::TempDir tmp;
  FaultEnv env;
  DiskTierOptions o = options(tmp.sub("kv"));
  o.env = &env;
  o.retry_interval = std::chrono::milliseconds(0);
  std::unique_ptr<DiskTier> tier = DiskTier::open(std::move(o));
  constexpr int32_t kChain = 100;  // more than one batch (64 records)
  env.hold(true);
  ASSERT_TRUE(put(*tier, 9, 0));
  env.wait_held();  // the writer is inside the write of 9/0
  for (int32_t i = 0; i < kChain; ++i) ASSERT_TRUE(put(*tier, 1, i));
  env.fail = true;
  env.hold(false);  // 9/0 fails, then the batch holding the chain's head
  tier->flush();
  env.fail = false;
  TierStats st = tier->stats();
  EXPECT_EQ(st.persisted, 0);
  EXPECT_EQ(st.write_errors, 2) << "the second batch's tail was dropped by the writer, not written";
  EXPECT_EQ(st.refused, kChain + 1);
  EXPECT_FALSE(put(*tier, 1, kChain)) << "the next block of the chain, offered after the failure";
  EXPECT_TRUE(put(*tier, 1, 0));
  EXPECT_TRUE(put(*tier, 1, 1));
  tier->flush();
  st = tier->stats();
  EXPECT_EQ(st.persisted, 2);
  for (int32_t i = 1; i <= kChain; ++i)
    if (tier->contains(key(1, i))) {
      EXPECT_TRUE(tier->contains(key(1, i - 1))) << "block " << i;
    }
}

TEST(DiskTier, AnUnreadableDatabaseIsRefusedOrMovedAside) {
  kvgate::testing::TempDir tmp;
  const std::string dir = tmp.sub("kv");
  {
    std::unique_ptr<DiskTier> tier = DiskTier::open(options(dir));
    ASSERT_TRUE(put(*tier, 1, 0));
  }
  std::ofstream(dir + "/CURRENT", std::ios::trunc) << "garbage\x01\x02 not a manifest name";
  try {
    DiskTier::open(options(dir));
    ADD_FAILURE() << "opened a database with a garbage CURRENT";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("kv disk tier at " + dir), std::string::npos) << e.what();
  }
  EXPECT_THROW(purge_disk_tier(dir, nullptr), std::runtime_error);
  EXPECT_TRUE(fs::exists(dir + "/CURRENT")) << "refusing leaves the directory as it was";

  DiskTierOptions o = options(dir);
  o.move_aside_corrupt = true;
  std::unique_ptr<DiskTier> tier = DiskTier::open(std::move(o));
  const std::string aside = tier->moved_aside_to();
  EXPECT_EQ(aside.rfind(dir + ".corrupt-", 0), 0u) << aside;
  EXPECT_TRUE(fs::exists(aside + "/CURRENT"));
  EXPECT_EQ(tier->stats().blocks, 0);
  ASSERT_TRUE(put(*tier, 1, 0));
  tier->flush();
  EXPECT_EQ(read_back(*tier, 1, 0), RecordFault::kNone);
}

TEST(DiskTier, AGarbageManifestIsRefused) {
  kvgate::testing::TempDir tmp;
  const std::string dir = tmp.sub("kv");
  DiskTier::open(options(dir)).reset();
  int manifests = 0;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().filename().string().starts_with("MANIFEST-")) {
      std::ofstream(f.path(), std::ios::trunc | std::ios::binary) << std::string(300, '\x5a');
      ++manifests;
    }
  ASSERT_GT(manifests, 0);
  try {
    DiskTier::open(options(dir));
    ADD_FAILURE() << "opened a database with a garbage MANIFEST";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir), std::string::npos) << e.what();
  }
  DiskTierOptions o = options(dir);
  o.move_aside_corrupt = true;
  EXPECT_FALSE(DiskTier::open(std::move(o))->moved_aside_to().empty());
}

// Writers, readers checking every record, a corrupter planting damage and an
// evictor, against one tier: every record that checks clean is its own.
TEST(DiskTier, ConcurrentUse) {
  kvgate::testing::TempDir tmp;
  std::unique_ptr<DiskTier> tier = DiskTier::open(options(tmp.sub("kv"), 40));
  const KvIdentity id = tier->identity();
  std::atomic<int64_t> verified{0}, planted{0};
  std::atomic<bool> wrong{false};
  auto worker = [&](int seed) {
    std::mt19937 rng(static_cast<uint32_t>(seed));
    for (int op = 0; op < 400; ++op) {
      const TenantId t = 1 + rng() % 3;
      const int32_t i = static_cast<int32_t>(rng() % 24);
      const BlockKey k = key_at(scope_of(t), i);
      const uint32_t what = rng() % 20;
      if (what < 8) {
        tier->enqueue(record_for(k, t, id), t);
      } else if (what < 18) {
        if (auto r = tier->get(tier_key(k))) {
          const RecordFault f = verify(*r, k, id);
          if (f == RecordFault::kNone) {
            ++verified;
            std::vector<std::byte> want = record_for(k, t, id);
            if (*r != want) wrong = true;
          } else {
            tier->drop_corrupt(tier_key(k), f);
          }
        }
      } else if (what == 18) {
        std::vector<std::byte> v = record_for(k, t, id);
        v[rng() % v.size()] ^= std::byte{0x20};
        tier->put_raw_for_test(tier_key(k), v, t, i);
        ++planted;
      } else if (rng() % 8 == 0) {
        tier->evict_tenant(t);
      } else {
        tier->flush();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) threads.emplace_back(worker, 7 + w);
  for (auto& th : threads) th.join();
  tier->flush();
  EXPECT_FALSE(wrong);
  EXPECT_GT(verified.load(), 0);
  const TierStats st = tier->stats();
  int64_t faults = 0;
  for (const auto& [name, n] : st.faults) faults += n;
  EXPECT_LE(faults, planted.load());
  EXPECT_LE(st.used_bytes, st.capacity_bytes);
  EXPECT_EQ(st.queued, 0);
}

}  // namespace
}  // namespace kvgate::cache
