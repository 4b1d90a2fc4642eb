#include <gtest/gtest.h>

#include <xxhash.h>

#include <numeric>
#include <vector>

#include "cache/block_hash.h"

namespace kvgate::cache {
namespace {

ChainSeedInputs base_inputs() { return {{1, 2}, {3, 4}, 16, ""}; }

std::vector<TokenId> iota_tokens(size_t n, TokenId first = 0) {
  std::vector<TokenId> t(n);
  std::iota(t.begin(), t.end(), first);
  return t;
}

// The bytes of a link, written out by hand: parent lo, parent hi (each
// little-endian 64-bit), then each token little-endian 32-bit.
Hash128 reference_link(const Hash128& parent, const std::vector<TokenId>& tokens) {
  std::vector<unsigned char> buf;
  for (uint64_t half : {parent.lo, parent.hi})
    for (int i = 0; i < 8; ++i) buf.push_back(static_cast<unsigned char>(half >> (8 * i)));
  for (TokenId t : tokens)
    for (int i = 0; i < 4; ++i) buf.push_back(static_cast<unsigned char>(static_cast<uint32_t>(t) >> (8 * i)));
  XXH128_hash_t h = XXH3_128bits(buf.data(), buf.size());
  return {h.low64, h.high64};
}

TEST(BlockHash, LinkIsXxh3OfParentThenTokens) {
  const Hash128 parent{0x0123456789abcdefull, 0xfedcba9876543210ull};
  for (size_t n : {1u, 16u, 128u, 129u, 300u}) {  // one-shot and streaming paths
    auto toks = iota_tokens(n, -5);
    EXPECT_EQ(hash_block(parent, toks), reference_link(parent, toks)) << n;
  }
}

TEST(BlockHash, SeedIsStableAcrossProcesses) {
  // Pinned: the disk tier and other nodes depend on these exact values. If
  // the hashed bytes must change, bump the seed tag and update these.
  const Hash128 seed = chain_seed(base_inputs());
  EXPECT_EQ(seed, chain_seed(base_inputs()));
  const Hash128 pinned_seed{0xcca9369bb7998ce2ull, 0x6828b21c39996f3eull};
  const Hash128 pinned_link{0x4b24d4a2c1c32ddcull, 0x2f5eaa438ef418d6ull};
  auto toks = iota_tokens(16);
  EXPECT_EQ(seed, pinned_seed);
  EXPECT_EQ(hash_block(seed, toks), pinned_link);
}

TEST(BlockHash, SeedSeparatesScopesModelsBlockSizesAndSalts) {
  const Hash128 s = chain_seed(base_inputs());
  auto in = base_inputs();
  in.scope.hi ^= 1;
  EXPECT_NE(chain_seed(in), s);
  in = base_inputs();
  in.model.lo ^= 1;
  EXPECT_NE(chain_seed(in), s);
  in = base_inputs();
  in.block_size = 32;
  EXPECT_NE(chain_seed(in), s);
  in = base_inputs();
  in.cache_salt = "a";
  EXPECT_NE(chain_seed(in), s);
  auto in2 = base_inputs();
  in2.cache_salt = "b";
  EXPECT_NE(chain_seed(in2), chain_seed(in));
}

TEST(BlockHash, ChainCoversFullBlocksOnlyAndExtendsIncrementally) {
  const Hash128 seed = chain_seed(base_inputs());
  auto toks = iota_tokens(70);
  std::vector<BlockHash> full;
  extend_chain(full, seed, toks, 16);
  ASSERT_EQ(full.size(), 4u);  // 64 of the 70 tokens
  EXPECT_EQ(full[0], hash_block(seed, std::span(toks).first(16)));
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(full[i], hash_block(full[i - 1], std::span(toks).subspan(16 * i, 16)));

  std::vector<BlockHash> grown;
  for (size_t n = 0; n <= toks.size(); n += 7) extend_chain(grown, seed, std::span(toks).first(n), 16);
  extend_chain(grown, seed, toks, 16);
  EXPECT_EQ(grown, full);
}

TEST(BlockHash, EveryLinkDependsOnTheWholePrefix) {
  const Hash128 seed = chain_seed(base_inputs());
  auto a = iota_tokens(48), b = a;
  b[3] = 999;
  std::vector<BlockHash> ca, cb;
  extend_chain(ca, seed, a, 16);
  extend_chain(cb, seed, b, 16);
  for (size_t i = 0; i < 3; ++i) EXPECT_NE(ca[i], cb[i]) << i;
}

}  // namespace
}  // namespace kvgate::cache
