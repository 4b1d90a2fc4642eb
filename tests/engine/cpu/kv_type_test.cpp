// K/V in f16 and bf16 on the CPU backend: the conversions (kv_element.h)
// against the scalar ones of float_convert.h, the pool's block copies and its memory, its
// capacity, and what the narrower K/V do to stories260K's greedy output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>

#include "engine/cpu/cpu_backend.h"
#include "engine/cpu/kv_element.h"
#include "engine/cpu/kv_pool.h"
#include "engine/kv_layout.h"
#include "engine/model/float_convert.h"
#include "engine/model/model.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

// Float bit patterns over every exponent (subnormals, overflow past the
// half types' range, infinities), and every rounding case of the low bits:
// a random pattern, then the same with its low 16 bits set to bf16's exact
// halfway point (0x8000), and to f16's (bit 12) with its last kept bit clear
// and set, and just below it.
std::vector<float> awkward_floats(size_t n) {
  std::mt19937 rng(17);
  std::vector<float> out;
  while (out.size() < n) {
    uint32_t bits = static_cast<uint32_t>(rng());
    for (uint32_t low : {bits & 0xffffu, 0x8000u, 0x1000u, 0x3000u, 0x0fffu}) {
      const float f = std::bit_cast<float>((bits & 0xffff0000u) | low);
      if (!std::isnan(f)) out.push_back(f);
    }
  }
  out.resize(n);  // not a multiple of 8: the last values take the scalar tail
  return out;
}

template <typename E>
std::vector<uint16_t> narrowed_bits(const std::vector<float>& x) {
  std::vector<E> e(x.size());
  cpu::narrow_row(x.data(), e.data(), static_cast<int64_t>(x.size()));
  std::vector<uint16_t> bits(x.size());
  for (size_t i = 0; i < x.size(); ++i) bits[i] = e[i].bits;
  return bits;
}

TEST(KvElement, NarrowingToF16MatchesScalarRoundToNearestEven) {
  const std::vector<float> x = awkward_floats(100003);
  const std::vector<uint16_t> got = narrowed_bits<cpu::F16>(x);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], f32_to_f16(x[i])) << i << ": " << x[i];
  // Halfway between 1 and the next f16 (1 + 2^-10) goes to the even 1; the
  // one above it, to the even 1 + 2^-9.
  EXPECT_EQ(narrowed_bits<cpu::F16>({1.0f + 0x1p-11f})[0], 0x3c00);
  EXPECT_EQ(narrowed_bits<cpu::F16>({1.0f + 3 * 0x1p-11f})[0], 0x3c02);
}

TEST(KvElement, NarrowingToBf16MatchesScalarRoundToNearestEven) {
  const std::vector<float> x = awkward_floats(100003);
  const std::vector<uint16_t> got = narrowed_bits<cpu::BF16>(x);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], f32_to_bf16(x[i])) << i << ": " << x[i];
  EXPECT_EQ(narrowed_bits<cpu::BF16>({1.0f + 0x1p-8f})[0], 0x3f80);
  EXPECT_EQ(narrowed_bits<cpu::BF16>({1.0f + 3 * 0x1p-8f})[0], 0x3f82);
  // The largest float rounds up into infinity; a NaN stays a NaN, both one
  // whose payload is all in the dropped bits (truncated, it would read as
  // infinity) and one where adding the rounding bias would carry into the
  // sign bit.
  std::vector<float> special(16, std::bit_cast<float>(0x7fffffffu));
  special[0] = std::numeric_limits<float>::max();
  special[1] = std::bit_cast<float>(0x7f800001u);
  const std::vector<uint16_t> s = narrowed_bits<cpu::BF16>(special);
  EXPECT_EQ(s[0], 0x7f80);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_TRUE(std::isnan(bf16_to_f32(s[i]))) << i;
}

// Every one of the 65,536 patterns of each half type widens exactly (as the
// scalar conversion does) and narrows back to itself.
TEST(KvElement, WideningIsExactForEveryPattern) {
  std::vector<uint16_t> all(65536);
  std::iota(all.begin(), all.end(), 0);
  std::vector<cpu::F16> h(all.size());
  std::vector<cpu::BF16> b(all.size());
  for (size_t i = 0; i < all.size(); ++i) h[i].bits = b[i].bits = all[i];
  std::vector<float> wh(all.size()), wb(all.size());
  cpu::widen_row(h.data(), wh.data(), static_cast<int64_t>(all.size()));
  cpu::widen_row(b.data(), wb.data(), static_cast<int64_t>(all.size()));
  for (size_t i = 0; i < all.size(); ++i) {
    const auto bits = static_cast<uint16_t>(i);
    if (std::isnan(f16_to_f32(bits))) {
      EXPECT_TRUE(std::isnan(wh[i])) << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(wh[i]), std::bit_cast<uint32_t>(f16_to_f32(bits))) << i;
      ASSERT_EQ(narrowed_bits<cpu::F16>({wh[i]})[0], bits) << i;
    }
    if (std::isnan(bf16_to_f32(bits))) {
      EXPECT_TRUE(std::isnan(wb[i])) << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(wb[i]), std::bit_cast<uint32_t>(bf16_to_f32(bits))) << i;
      ASSERT_EQ(narrowed_bits<cpu::BF16>({wb[i]})[0], bits) << i;
    }
  }
}

std::string type_name(const ::testing::TestParamInfo<KvType>& info) { return std::string(kv_type_name(info.param)); }

class KvPoolTypes : public ::testing::TestWithParam<KvType> {};
INSTANTIATE_TEST_SUITE_P(KvTypes, KvPoolTypes, ::testing::Values(KvType::kF32, KvType::kF16, KvType::kBF16),
                         type_name);

// A block copied out, into another block and out again is the same bytes;
// copy_block does the same inside the pool; neither touches other blocks.
TEST_P(KvPoolTypes, BlockCopiedOutAndInRoundTripsBitExactly) {
  const int32_t layers = 3, blocks = 6, B = 4, kvd = 20;
  KvPool pool(GetParam(), layers, blocks, B, kvd);
  EXPECT_EQ(pool.block_bytes(), static_cast<size_t>(2 * layers * B * kvd * kv_type_bytes(GetParam())));
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  std::vector<float> k(kvd), v(kvd);
  for (int32_t l = 0; l < layers; ++l)
    for (int32_t b = 0; b < blocks; ++b)
      for (int32_t s = 0; s < B; ++s) {
        for (auto& x : k) x = nd(rng);
        for (auto& x : v) x = nd(rng);
        pool.store(l, b, s, k.data(), v.data());
      }
  auto out = [&](BlockId b) {
    std::vector<std::byte> bytes(pool.block_bytes());
    pool.copy_block_out(b, bytes);
    return bytes;
  };
  const std::vector<std::byte> b1 = out(1), b2 = out(2), b4 = out(4);
  ASSERT_NE(b1, b2);
  pool.copy_block_in(3, b1);
  EXPECT_EQ(out(3), b1);
  pool.copy_block(2, 5);
  EXPECT_EQ(out(5), b2);
  EXPECT_EQ(out(1), b1);
  EXPECT_EQ(out(2), b2);
  EXPECT_EQ(out(4), b4);
  std::vector<std::byte> wrong(pool.block_bytes() + 1);
  EXPECT_THROW(pool.copy_block_out(0, wrong), Error);
  EXPECT_THROW(pool.copy_block_in(blocks, b1), Error);
  EXPECT_THROW(pool.copy_block(0, -1), Error);
}

std::shared_ptr<const Model> stories() {
  static auto m = Model::load(shared_path("models/stories260K.gguf"));
  return m;
}

// This process's resident memory, from /proc/self/statm (in pages).
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// A pool is resident only as its blocks are written: at construction it
// once wrote every byte, so a server held its whole KV budget in RAM before
// its first request. An unwritten block still copies out as zeros.
TEST(KvPool, OnlyWrittenBlocksBecomeResident) {
  const int32_t layers = 4, blocks = 2048, B = 16, kvd = 256;  // f32: 256 MiB of K and V
  const int64_t before = resident_bytes();
  KvPool pool(KvType::kF32, layers, blocks, B, kvd);
  const int64_t pool_bytes = static_cast<int64_t>(pool.block_bytes()) * blocks;
  ASSERT_EQ(pool_bytes, int64_t{256} << 20);
  EXPECT_LT(resident_bytes() - before, pool_bytes / 16);
  std::vector<float> k(kvd, 1.5f), v(kvd, -2.0f);
  for (int32_t l = 0; l < layers; ++l) pool.store(l, 7, 3, k.data(), v.data());
  std::vector<std::byte> written(pool.block_bytes()), unwritten(pool.block_bytes(), std::byte{1});
  pool.copy_block_out(7, written);
  pool.copy_block_out(8, unwritten);
  EXPECT_EQ(std::count(unwritten.begin(), unwritten.end(), std::byte{0}), static_cast<std::ptrdiff_t>(unwritten.size()));
  float first_k = 0;
  std::memcpy(&first_k, written.data() + 3 * kvd * sizeof(float), sizeof first_k);  // layer 0's K, slot 3
  EXPECT_EQ(first_k, 1.5f);
  EXPECT_LT(resident_bytes() - before, pool_bytes / 16);
}

TEST_P(KvPoolTypes, BackendReportsItsTypeAndTheBlocksItsBudgetHolds) {
  BackendOptions f32, t;
  f32.kv_budget_bytes = t.kv_budget_bytes = int64_t{1} << 20;
  t.kv_type = GetParam();
  auto a = make_cpu_backend(stories(), f32), b = make_cpu_backend(stories(), t);
  EXPECT_EQ(b->kv_layout().type, GetParam());
  const int64_t ratio = 4 / kv_type_bytes(GetParam());
  EXPECT_EQ(b->num_blocks(), ratio * a->num_blocks());
  EXPECT_EQ(b->block_bytes() * static_cast<size_t>(ratio), a->block_bytes());
}

Tokens golden_ids() {
  std::ifstream f(shared_path("models/stories260K.greedy200.ids.txt"));
  Tokens ids;
  for (TokenId id; f >> id;) ids.push_back(id);
  return ids;
}

struct Greedy {
  Tokens ids;
  std::vector<std::vector<float>> logits;  // per step
};

// Greedy decoding from BOS, one token per step, as the golden was made.
Greedy greedy(KvType type, int steps) {
  BackendOptions opt;
  opt.kv_type = type;
  auto be = make_cpu_backend(stories(), opt);
  std::vector<BlockId> table(static_cast<size_t>(be->num_blocks()));
  std::iota(table.begin(), table.end(), 0);
  Greedy g;
  Tokens seq{1};  // BOS
  Logits out;
  for (int step = 0; step < steps; ++step) {
    SequenceStep st{std::span(seq).subspan(seq.size() - 1, 1), static_cast<int32_t>(seq.size() - 1), table,
                    LogitsWanted::kLast};
    be->forward({&st, 1}, out);
    const std::span<const float> row = out.row(0);
    g.logits.emplace_back(row.begin(), row.end());
    seq.push_back(static_cast<TokenId>(std::max_element(row.begin(), row.end()) - row.begin()));
  }
  g.ids.assign(seq.begin() + 1, seq.end());
  return g;
}

// Both half types reproduce all 200 published tokens, and every step's
// logits stay near the f32 pool's along the way. Stored K/V carry relative
// error up to 2^-11 (f16) and 2^-8 (bf16); over 200 steps the worst logit
// differences seen (logits reach |20|) are 0.023 and 0.15, and the bounds
// leave 4x that. One position read from the wrong slot moves logits by
// more than 1.
struct HalfCase {
  KvType type;
  float logit_tolerance;
};

class HalfKv : public ::testing::TestWithParam<HalfCase> {};
std::string half_name(const ::testing::TestParamInfo<HalfCase>& info) {
  return std::string(kv_type_name(info.param.type));
}
INSTANTIATE_TEST_SUITE_P(KvTypes, HalfKv,
                         ::testing::Values(HalfCase{KvType::kF16, 0.1f}, HalfCase{KvType::kBF16, 0.6f}), half_name);

TEST_P(HalfKv, Stories260KGreedyMatchesPublishedIdsAndF32Logits) {
  const Tokens expected = golden_ids();
  ASSERT_EQ(expected.size(), 200u);
  const Greedy half = greedy(GetParam().type, 200), f32 = greedy(KvType::kF32, 200);
  EXPECT_EQ(half.ids, expected);
  ASSERT_EQ(f32.ids, expected);
  float worst = 0;
  for (size_t s = 0; s < half.logits.size(); ++s)
    for (size_t v = 0; v < half.logits[s].size(); ++v)
      worst = std::max(worst, std::abs(half.logits[s][v] - f32.logits[s][v]));
  EXPECT_LE(worst, GetParam().logit_tolerance);
  std::printf("[ %s K/V vs f32 over 200 greedy steps: max |logit diff| %.3g ]\n",
              std::string(kv_type_name(GetParam().type)).c_str(), static_cast<double>(worst));
}

}  // namespace
}  // namespace kvgate
