// Hash ids to token blocks: the same id gives the same tokens on every
// call and every run, different ids differ, a partial block is the whole
// block's start, and every id is in the vocabulary.
#include <gtest/gtest.h>

#include <set>

#include "base/error.h"
#include "gateway/tools/loadgen/token_blocks.h"

namespace kvgate::loadgen {
namespace {

TEST(TokenBlocks, SameIdSameTokens) {
  const TokenBlocks a(16, 32000), b(16, 32000);
  EXPECT_EQ(a.block(46), b.block(46));
  EXPECT_EQ(a.block(46).size(), 16u);
}

TEST(TokenBlocks, PinnedValuesDoNotChangeBetweenBuilds) {
  // A run's prompts must be the same next month: these ids are the contract.
  const Tokens t = TokenBlocks(4, 32000).block(0);
  EXPECT_EQ(t, (Tokens{6350, 18661, 18796, 14890}));
  EXPECT_EQ(TokenBlocks(4, 32000).block(182789), (Tokens{12699, 26003, 26791, 16242}));
  const Tokens first = TokenBlocks(8, 32000).block(0);
  EXPECT_EQ(Tokens(first.begin(), first.begin() + 4), t);  // the block size is not in the seed
}

TEST(TokenBlocks, DifferentIdsAndSeedsDiffer) {
  const TokenBlocks a(16, 32000);
  std::set<Tokens> seen;
  for (uint64_t id = 0; id < 1000; ++id) seen.insert(a.block(id));
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_NE(TokenBlocks(16, 32000, 1).block(5), a.block(5));
}

TEST(TokenBlocks, APartialBlockIsTheStartOfTheWholeOne) {
  const TokenBlocks a(32, 32000);
  Tokens part;
  a.append(7, 5, part);
  const Tokens whole = a.block(7);
  ASSERT_EQ(part.size(), 5u);
  EXPECT_EQ(part, Tokens(whole.begin(), whole.begin() + 5));
  Tokens capped;
  a.append(7, 99, capped);  // never more than a block
  EXPECT_EQ(capped, whole);
}

TEST(TokenBlocks, IdsStayInTheVocabularyAboveTheSpecialOnes) {
  const TokenBlocks a(64, 10);
  for (uint64_t id = 0; id < 200; ++id)
    for (TokenId t : a.block(id)) {
      EXPECT_GE(t, kFirstTokenId);
      EXPECT_LT(t, 10);
    }
}

TEST(TokenBlocks, BadShapesAreErrors) {
  EXPECT_THROW(TokenBlocks(0, 32000), Error);
  EXPECT_THROW(TokenBlocks(16, 3), Error);
}

}  // namespace
}  // namespace kvgate::loadgen
