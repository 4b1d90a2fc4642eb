// What the pool tests share: blocks of four tokens and a prompt's hash
// chain, built as the scheduler builds it (chain_seed, extend_chain).
#pragma once

#include <string_view>
#include <vector>

#include "cache/block_hash.h"

namespace kvgate::cache::pool_testing {

inline constexpr int32_t kB = 4;

struct Chain {
  Hash128 seed;
  std::vector<TokenId> tokens;
  std::vector<BlockHash> hashes;
};

inline Chain make_chain(const ScopeId& scope, std::vector<TokenId> tokens, std::string_view salt = "", int32_t B = kB) {
  Chain c{chain_seed({scope, {9, 9}, B, salt}), std::move(tokens), {}};
  extend_chain(c.hashes, c.seed, c.tokens, B);
  return c;
}

}  // namespace kvgate::cache::pool_testing
