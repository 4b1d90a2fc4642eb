// TierMover driven directly, over a HostTier and a DiskTier in a temp dir,
// with a fake device whose blocks are bytes in memory: what is copied down
// comes back up bit for bit, collect() returns each offloaded block once,
// a prefetch reports where the chain it found starts and stops at the first
// damaged record (dropped and counted), and forget() lets a prefetch go.
#include "cache/tiers/tier_mover.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "cache/tiers/disk_tier.h"
#include "tests/cache/tiers/tier_test_support.h"
#include "tests/temp_dir.h"

namespace kvgate::cache {
namespace {

// Device blocks as plain bytes; to_host/from_host copy them.
class MoverFakeDevice : public BlockCopier {
 public:
  MoverFakeDevice(int32_t n_blocks, size_t block_bytes)
      : bytes_(block_bytes), blocks_(static_cast<size_t>(n_blocks), std::vector<std::byte>(block_bytes, std::byte{0xEE})) {}
  size_t block_bytes() const override { return bytes_; }
  void to_host(BlockId block, std::span<std::byte> dst) const override {
    const std::vector<std::byte>& b = blocks_.at(static_cast<size_t>(block));
    if (dst.size() != b.size()) throw std::logic_error("to_host: wrong size");
    std::copy(b.begin(), b.end(), dst.begin());
  }
  void from_host(BlockId block, std::span<const std::byte> src) override {
    std::vector<std::byte>& b = blocks_.at(static_cast<size_t>(block));
    if (src.size() != b.size()) throw std::logic_error("from_host: wrong size");
    std::copy(src.begin(), src.end(), b.begin());
  }
  void copy(BlockId src, BlockId dst) override { blocks_.at(static_cast<size_t>(dst)) = blocks_.at(static_cast<size_t>(src)); }

  std::vector<std::byte>& block(BlockId b) { return blocks_.at(static_cast<size_t>(b)); }
  void fill_random(BlockId b, uint32_t seed) {
    std::mt19937 rng(seed);
    for (std::byte& x : block(b)) x = static_cast<std::byte>(rng() & 0xff);
  }

 private:
  size_t bytes_;
  std::vector<std::vector<std::byte>> blocks_;
};

// One request's chain of `n` blocks in `scope`, keyed as tier_test_support's key_at.
struct MoverChain {
  ScopeId scope;
  BlockHash seed;
  std::vector<BlockKey> keys;
  std::vector<BlockHash> hashes;
  std::vector<TokenId> tokens;  // block i holds tokens[i*B, (i+1)*B)
  int32_t block_size = 0;

  MoverChain(uint64_t tenant, int32_t n, const KvIdentity& id) : scope(testing::scope_of(tenant)), block_size(id.block_size) {
    for (int32_t i = 0; i < n; ++i) {
      keys.push_back(testing::key_at(scope, i));
      hashes.push_back(keys.back().hash);
      const std::vector<TokenId> t = testing::tokens_for(keys.back(), id.block_size);
      tokens.insert(tokens.end(), t.begin(), t.end());
    }
    seed = keys.front().parent;
  }
  std::span<const TokenId> tokens_of(size_t i) const {
    return std::span(tokens).subspan(i * static_cast<size_t>(block_size), static_cast<size_t>(block_size));
  }
};

constexpr TenantId kMoverOwner = 1;

std::shared_ptr<HostTier> mover_host_tier(int32_t slots) {
  const KvIdentity id = testing::small_identity();
  return std::make_shared<HostTier>(static_cast<int64_t>(record_bytes(id)) * slots, id);
}

std::shared_ptr<DiskTier> mover_disk_tier(const kvgate::testing::TempDir& tmp) {
  DiskTierOptions o;
  o.dir = tmp.sub("kv");
  o.identity = testing::small_identity();
  o.capacity_bytes = 100 * static_cast<int64_t>(record_bytes(o.identity));
  return std::shared_ptr<DiskTier>(DiskTier::open(std::move(o)));
}

// Offloads device blocks first, first+1, ... as the chain's blocks 0.. n-1.
void offload_chain(TierMover& m, const MoverChain& c, BlockId first, size_t n) {
  for (size_t i = 0; i < n; ++i)
    m.offload(first + static_cast<BlockId>(i), c.keys[i], kMoverOwner, 0, c.tokens_of(i));
}

// Prefetches the chain from `from` for `req` and takes what was found.
TierMover::Found prefetch_and_take(TierMover& m, RequestId req, const MoverChain& c, int32_t from) {
  m.prefetch(req, c.scope, c.seed, c.hashes, c.tokens, from);
  EXPECT_TRUE(m.wait_prefetch(req, 600000));  // waits on the reader; the bound only stops a hang
  EXPECT_FALSE(m.prefetch_pending(req));
  return m.take(req);
}

int64_t mover_fault_count(const TierStats& s) {
  int64_t n = 0;
  for (const auto& [name, count] : s.faults) n += count;
  return n;
}

TEST(TierMover, RefusesADeviceWhoseBlocksAreNotTheIdentitysSize) {
  MoverFakeDevice dev(2, 100);
  EXPECT_THROW(TierMover(LowerTiers{mover_host_tier(4), nullptr}, dev, testing::small_identity()), std::invalid_argument);
}

TEST(TierMover, OffloadedBlocksRestoreBitForBit) {
  const KvIdentity id = testing::small_identity();
  auto host = mover_host_tier(16);
  MoverFakeDevice dev(8, static_cast<size_t>(id.payload_bytes()));
  TierMover m(LowerTiers{host, nullptr}, dev, id);
  const MoverChain c(1, 4, id);
  for (BlockId b = 0; b < 4; ++b) dev.fill_random(b, 100 + static_cast<uint32_t>(b));

  offload_chain(m, c, 0, 4);
  m.wait_offloads();
  std::vector<BlockId> done;
  m.collect(done);
  EXPECT_EQ(done, (std::vector<BlockId>{0, 1, 2, 3}));  // in the order given
  EXPECT_EQ(m.offloads_in_flight(), 0);
  EXPECT_EQ(m.stats().offloaded, 4);
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(host->contains(testing::tier_key(c.keys[i]))) << i;

  TierMover::Found f = prefetch_and_take(m, 7, c, 0);
  EXPECT_EQ(f.from, 0);
  ASSERT_EQ(f.blocks.size(), 4u);
  std::vector<TierMover::Restore> r;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f.blocks[i].tier(), policies::Tier::kHost);
    r.push_back({&f.blocks[i], c.keys[i], c.tokens_of(i), 4 + static_cast<BlockId>(i)});
  }
  const std::vector<RecordFault> faults = m.restore(r);
  EXPECT_EQ(faults, std::vector<RecordFault>(4, RecordFault::kNone));
  for (BlockId b = 0; b < 4; ++b) EXPECT_EQ(dev.block(4 + b), dev.block(b)) << "block " << b;
  EXPECT_EQ(mover_fault_count(host->stats()), 0);
}

TEST(TierMover, CollectHandsBackEachOffloadedBlockOnce) {
  const KvIdentity id = testing::small_identity();
  auto host = mover_host_tier(16);
  MoverFakeDevice dev(8, static_cast<size_t>(id.payload_bytes()));
  TierMover m(LowerTiers{host, nullptr}, dev, id);
  const MoverChain c(2, 3, id);

  offload_chain(m, c, 0, 3);
  m.offload(5, c.keys[1], kMoverOwner, 0, c.tokens_of(1));  // the same key again: already below
  EXPECT_EQ(m.offloads_in_flight(), 4);
  m.wait_offloads();
  EXPECT_EQ(m.offloads_in_flight(), 4);  // done, but not collected yet
  std::vector<BlockId> done;
  m.collect(done);
  std::sort(done.begin(), done.end());
  EXPECT_EQ(done, (std::vector<BlockId>{0, 1, 2, 5}));
  EXPECT_EQ(m.offloads_in_flight(), 0);
  std::vector<BlockId> again;
  m.collect(again);
  EXPECT_TRUE(again.empty());
  EXPECT_EQ(m.stats().offloaded, 3);
  EXPECT_EQ(m.stats().offload_skipped, 1);
}

TEST(TierMover, PrefetchReportsWhereTheStoredChainStartsAndStops) {
  const KvIdentity id = testing::small_identity();
  auto host = mover_host_tier(16);
  MoverFakeDevice dev(8, static_cast<size_t>(id.payload_bytes()));
  TierMover m(LowerTiers{host, nullptr}, dev, id);
  const MoverChain c(3, 6, id);  // six blocks asked, four stored
  offload_chain(m, c, 0, 4);
  m.wait_offloads();

  TierMover::Found f = prefetch_and_take(m, 11, c, 1);
  EXPECT_EQ(f.from, 1);
  ASSERT_EQ(f.blocks.size(), 3u);  // chain blocks 1, 2, 3; 4 is nowhere
  for (size_t k = 0; k < f.blocks.size(); ++k)
    EXPECT_EQ(testing::verify(f.blocks[k].record(), c.keys[1 + k], id), RecordFault::kNone) << k;
  EXPECT_EQ(m.take(11).blocks.size(), 0u);  // taken once

  // Nothing stored from the start: found nothing, from where it was asked.
  const MoverChain other(4, 3, id);
  TierMover::Found none = prefetch_and_take(m, 12, other, 0);
  EXPECT_TRUE(none.blocks.empty());
  EXPECT_EQ(m.stats().prefetches, 2);
}

TEST(TierMover, ForgetDropsARequestsPrefetch) {
  const KvIdentity id = testing::small_identity();
  auto host = mover_host_tier(16);
  MoverFakeDevice dev(4, static_cast<size_t>(id.payload_bytes()));
  TierMover m(LowerTiers{host, nullptr}, dev, id);
  const MoverChain c(5, 3, id);
  offload_chain(m, c, 0, 3);
  m.wait_offloads();

  m.prefetch(21, c.scope, c.seed, c.hashes, c.tokens, 0);
  ASSERT_TRUE(m.wait_prefetch(21, 600000));
  EXPECT_EQ(host->stats().pinned, 3);  // the found blocks are leased for the request
  m.forget(21);
  EXPECT_EQ(host->stats().pinned, 0);  // let go
  EXPECT_TRUE(m.take(21).blocks.empty());
  EXPECT_FALSE(m.prefetch_pending(21));
}

TEST(TierMover, WritesThroughToDiskAndPrefetchesFromIt) {
  const KvIdentity id = testing::small_identity();
  kvgate::testing::TempDir tmp;
  auto disk = mover_disk_tier(tmp);
  MoverFakeDevice dev(8, static_cast<size_t>(id.payload_bytes()));
  const MoverChain c(6, 4, id);
  for (BlockId b = 0; b < 4; ++b) dev.fill_random(b, 200 + static_cast<uint32_t>(b));
  {  // host and disk: each block lands in both
    auto host = mover_host_tier(16);
    TierMover m(LowerTiers{host, disk}, dev, id);
    offload_chain(m, c, 0, 4);
    m.wait_offloads();
    disk->flush();
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_TRUE(host->contains(testing::tier_key(c.keys[i]))) << i;
      EXPECT_TRUE(disk->contains(testing::tier_key(c.keys[i]))) << i;
    }
  }
  // A fresh (empty) host tier over the same disk: found on disk, copied up.
  auto host = mover_host_tier(16);
  TierMover m(LowerTiers{host, disk}, dev, id);
  TierMover::Found f = prefetch_and_take(m, 31, c, 0);
  EXPECT_EQ(f.from, 0);
  ASSERT_EQ(f.blocks.size(), 4u);
  EXPECT_EQ(m.stats().disk_reads, 4);
  std::vector<TierMover::Restore> r;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f.blocks[i].tier(), policies::Tier::kDisk);
    EXPECT_TRUE(host->contains(testing::tier_key(c.keys[i]))) << i;
    r.push_back({&f.blocks[i], c.keys[i], c.tokens_of(i), 4 + static_cast<BlockId>(i)});
  }
  EXPECT_EQ(m.restore(r), std::vector<RecordFault>(4, RecordFault::kNone));
  for (BlockId b = 0; b < 4; ++b) EXPECT_EQ(dev.block(4 + b), dev.block(b)) << "block " << b;
}

TEST(TierMover, DamagedDiskRecordIsAFaultAndTheChainStopsThere) {
  const KvIdentity id = testing::small_identity();
  kvgate::testing::TempDir tmp;
  auto disk = mover_disk_tier(tmp);
  MoverFakeDevice dev(8, static_cast<size_t>(id.payload_bytes()));
  TierMover m(LowerTiers{nullptr, disk}, dev, id);  // disk only
  const MoverChain c(7, 4, id);
  for (BlockId b = 0; b < 4; ++b) dev.fill_random(b, 300 + static_cast<uint32_t>(b));
  offload_chain(m, c, 0, 4);
  m.wait_offloads();
  disk->flush();

  // Block 2's record, with one payload byte flipped, planted in the tier.
  std::vector<std::byte> bad(record_bytes(id));
  dev.to_host(2, record_payload(std::span(bad), id));
  seal_record(bad, c.keys[2], kMoverOwner, id, c.tokens_of(2));
  record_payload(std::span(bad), id)[17] ^= std::byte{0x04};
  disk->put_raw_for_test(testing::tier_key(c.keys[2]), bad, kMoverOwner, 2);

  TierMover::Found f = prefetch_and_take(m, 41, c, 0);
  EXPECT_EQ(f.from, 0);
  ASSERT_EQ(f.blocks.size(), 2u);  // blocks 0 and 1; 3 is good but after the fault
  const TierStats s = disk->stats();
  EXPECT_EQ(s.faults.count(std::string(fault_name(RecordFault::kPayloadChecksum))), 1u);
  EXPECT_EQ(mover_fault_count(s), 1);
  EXPECT_FALSE(disk->contains(testing::tier_key(c.keys[2])));  // dropped
  EXPECT_TRUE(disk->contains(testing::tier_key(c.keys[3])));
  std::vector<TierMover::Restore> r;
  for (size_t i = 0; i < 2; ++i) r.push_back({&f.blocks[i], c.keys[i], c.tokens_of(i), 4 + static_cast<BlockId>(i)});
  EXPECT_EQ(m.restore(r), std::vector<RecordFault>(2, RecordFault::kNone));
  EXPECT_EQ(dev.block(4), dev.block(0));
  EXPECT_EQ(dev.block(5), dev.block(1));
}

TEST(TierMover, DamagedHostRecordIsNotRestored) {
  const KvIdentity id = testing::small_identity();
  auto host = mover_host_tier(16);
  MoverFakeDevice dev(8, static_cast<size_t>(id.payload_bytes()));
  TierMover m(LowerTiers{host, nullptr}, dev, id);
  const MoverChain c(8, 3, id);
  for (BlockId b = 0; b < 3; ++b) dev.fill_random(b, 400 + static_cast<uint32_t>(b));
  // Blocks 0 and 2 copied down by the mover; block 1 planted damaged.
  m.offload(0, c.keys[0], kMoverOwner, 0, c.tokens_of(0));
  m.offload(2, c.keys[2], kMoverOwner, 0, c.tokens_of(2));
  m.wait_offloads();
  {
    std::optional<HostTier::Reservation> res = host->reserve(testing::tier_key(c.keys[1]), kMoverOwner);
    ASSERT_TRUE(res);
    dev.to_host(1, record_payload(res->bytes(), id));
    seal_record(res->bytes(), c.keys[1], kMoverOwner, id, c.tokens_of(1));
    record_payload(res->bytes(), id)[3] ^= std::byte{0x80};
    res->publish();
  }

  TierMover::Found f = prefetch_and_take(m, 51, c, 0);
  ASSERT_EQ(f.blocks.size(), 3u);  // a host hit is leased, checked when restored
  std::vector<TierMover::Restore> r;
  for (size_t i = 0; i < 3; ++i) r.push_back({&f.blocks[i], c.keys[i], c.tokens_of(i), 4 + static_cast<BlockId>(i)});
  const std::vector<RecordFault> faults = m.restore(r);
  EXPECT_EQ(faults, (std::vector<RecordFault>{RecordFault::kNone, RecordFault::kPayloadChecksum, RecordFault::kNone}));
  EXPECT_EQ(dev.block(4), dev.block(0));
  EXPECT_EQ(dev.block(5), std::vector<std::byte>(dev.block_bytes(), std::byte{0xEE}));  // not written
  EXPECT_EQ(dev.block(6), dev.block(2));
  EXPECT_EQ(mover_fault_count(host->stats()), 1);
  f = {};  // the leases end: the damaged entry is gone
  EXPECT_FALSE(host->contains(testing::tier_key(c.keys[1])));
  EXPECT_TRUE(host->contains(testing::tier_key(c.keys[0])));
}

}  // namespace
}  // namespace kvgate::cache
