// The KV sizes `kvgate serve` starts with: a size given is kept exactly, an
// "auto" one is chosen from the model and the room the machine reports
// (given here, so the rules are checked on numbers, not on this machine).
#include "gateway/serving/kv_sizes.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/temp_dir.h"

namespace kvgate::serving {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "'" << needle << "' not in: " << (haystack)

// stories260K's shape: 5 layers x 4 KV heads x 8 = 1280 bytes of f32 K/V a
// token, a 2048-token context: 2.5 MiB a context, 640 MiB for 256 of them.
ModelConfig stories() {
  ModelConfig m;
  m.n_layers = 5, m.dim = 64, m.n_heads = 8, m.n_kv_heads = 4, m.head_dim = 8, m.context_length = 2048;
  return m;
}

MachineRoom room(int64_t memory, int64_t disk_free = 100 * kGiB, int64_t disk_tier = 0) {
  return {memory, disk_free, disk_tier};
}

// The embedded default on a machine with 23 GiB free: what 256 running
// full contexts need (it was a fixed 1 GiB, 409.59 contexts for 256 running),
// and the tiers a tenth of the memory and of the disk (they were 2 GiB and
// 16 GiB whatever the machine).
TEST(KvSizes, TheDefaultsFitTheModelAndTheMachine) {
  const config::ServerConfig c;
  const KvSizes s = choose_kv_sizes(c, stories(), true, room(23 * kGiB, 70 * kGiB));
  EXPECT_EQ(s.kv_budget.bytes, 640 * kMiB);
  EXPECT_EQ(s.budget_line(),
            "KV budget 640.0 MiB (auto: 2048-token context x 256 running; 10% of 23.0 GiB available memory would be "
            "2.3 GiB)");
  EXPECT_EQ(s.host.bytes, 23 * kGiB / 10);
  EXPECT_EQ(s.host.why, "auto: 10% of 23.0 GiB available memory");
  EXPECT_EQ(s.disk.bytes, 7 * kGiB);
  EXPECT_EQ(s.disk.why, "auto: 10% of 70.0 GiB free for kvgate-data/kv");
  EXPECT_EQ(s.gpu_memory_percent, 0);
}

TEST(KvSizes, AHostPoolIsCappedByAShareOfAvailableMemoryButHoldsOneContext) {
  const config::ServerConfig c;
  const KvSizes small = choose_kv_sizes(c, stories(), true, room(kGiB));
  EXPECT_EQ(small.kv_budget.bytes, kGiB / 10);
  EXPECT_HAS(small.kv_budget.why, "auto: 10% of 1.0 GiB available memory; 2048-token context x 256 running would need "
                                  "640.0 MiB");
  const KvSizes tiny = choose_kv_sizes(c, stories(), true, room(10 * kMiB));
  EXPECT_EQ(tiny.kv_budget.bytes, 2048 * 1280);
  EXPECT_HAS(tiny.kv_budget.why, "auto: one 2048-token context, as 10% of 10.0 MiB available memory (1.0 MiB) holds less");
}

// What the scheduler runs at once: max_running, capped at max_step_tokens
// (0 = as many as a step's tokens); the context rounded up to whole blocks;
// the element type's bytes.
TEST(KvSizes, TheNeedFollowsRunningContextBlocksAndType) {
  config::ServerConfig c;
  c.model.max_running = 0;
  EXPECT_EQ(effective_max_running(c.model), 512);
  EXPECT_EQ(choose_kv_sizes(c, stories(), true, room(100 * kGiB)).kv_budget.bytes, 1280 * kMiB);
  c.model.max_running = 1000;
  EXPECT_EQ(effective_max_running(c.model), 512);
  c.model.max_running = 4;
  c.model.kv_type = "f16";
  c.model.block_size = 100;  // 2048 tokens take 21 blocks of 100
  EXPECT_EQ(choose_kv_sizes(c, stories(), true, room(100 * kGiB)).kv_budget.bytes, int64_t{4} * 2100 * 640);
}

// On a device the budget is the need and the backend caps it at a share of
// the device's memory: gpu_memory_percent, else vLLM's 90%.
TEST(KvSizes, ADevicePoolIsCappedByTheDeviceShare) {
  config::ServerConfig c;
  const KvSizes s = choose_kv_sizes(c, stories(), false, room(kGiB));
  EXPECT_EQ(s.kv_budget.bytes, 640 * kMiB);
  EXPECT_EQ(s.gpu_memory_percent, 90);
  EXPECT_HAS(s.budget_line(), "auto: 2048-token context x 256 running; the device holds at most 90% of its memory");
  c.model.gpu_memory_percent = 50;
  EXPECT_EQ(choose_kv_sizes(c, stories(), false, room(kGiB)).gpu_memory_percent, 50);
}

// Every size the operator gave is used as given, whatever the machine: no
// cap, no floor, and 0 still means no tier.
TEST(KvSizes, GivenSizesAreKeptExactly) {
  config::ServerConfig c;
  c.model.kv_budget_bytes = kGiB;
  c.kv_tiers.host_bytes = 0;
  c.kv_tiers.disk_bytes = 16 * kGiB;
  for (bool host : {true, false}) {
    const KvSizes s = choose_kv_sizes(c, stories(), host, room(kMiB, kMiB, kMiB));
    EXPECT_EQ(s.kv_budget.bytes, kGiB);
    EXPECT_EQ(s.budget_line(), "KV budget 1.0 GiB (model.kv_budget)");
    EXPECT_EQ(s.gpu_memory_percent, 0);  // kv_budget alone, as before
    EXPECT_EQ(s.host.bytes, 0);
    EXPECT_EQ(s.disk.bytes, 16 * kGiB);
    EXPECT_EQ(s.disk.why, "kv_tiers.disk_bytes");
  }
}

// The disk tier's own files count as room, so a full tier is not shrunk
// at the next start by what it holds.
TEST(KvSizes, WhatTheDiskTierHoldsCountsAsRoom) {
  const KvSizes s = choose_kv_sizes(config::ServerConfig{}, stories(), true, room(kGiB, 60 * kGiB, 10 * kGiB));
  EXPECT_EQ(s.disk.bytes, 7 * kGiB);
  EXPECT_EQ(s.disk.why, "auto: 10% of 70.0 GiB free for kvgate-data/kv, the 10.0 GiB it holds included");

  kvgate::testing::TempDir dir;
  config::ServerConfig c;
  c.data.dir = dir.sub("data");
  std::filesystem::create_directories(c.kv_disk_path() + "/blobs");
  std::ofstream(c.kv_disk_path() + "/blobs/000001.blob") << std::string(3000, 'x');
  std::ofstream(c.kv_disk_path() + "/MANIFEST-000001") << std::string(100, 'x');
  const MachineRoom measured = MachineRoom::measure(c);
  EXPECT_EQ(measured.disk_tier_bytes, 3100);
  EXPECT_GT(measured.disk_free_bytes, 0);
  EXPECT_GT(measured.memory_bytes, 0);
}

}  // namespace
}  // namespace kvgate::serving
