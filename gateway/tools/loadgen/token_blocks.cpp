// Block id -> deterministic token ids. Pure; any thread.
#include "gateway/tools/loadgen/token_blocks.h"

#include <string>

#include "base/error.h"

namespace kvgate::loadgen {

uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

TokenBlocks::TokenBlocks(int32_t block_tokens, int32_t vocab_size, uint64_t seed)
    : block_tokens_(block_tokens), vocab_size_(vocab_size), seed_(seed) {
  if (block_tokens < 1) throw Error("block tokens must be at least 1 (got " + std::to_string(block_tokens) + ")");
  if (vocab_size <= kFirstTokenId)
    throw Error("vocabulary size must be more than " + std::to_string(kFirstTokenId) + " (got " +
                std::to_string(vocab_size) + ")");
}

void TokenBlocks::append(uint64_t id, int32_t n, Tokens& out) const {
  if (n > block_tokens_) n = block_tokens_;
  // SplitMix64 as a stream: state advances by the golden gamma, each output
  // is the mixed state. Seeded by (seed, id) only, never by position in a
  // request, so the block is the same wherever it appears.
  uint64_t state = mix64(seed_ ^ mix64(id));
  const uint64_t span = static_cast<uint64_t>(vocab_size_ - kFirstTokenId);
  for (int32_t i = 0; i < n; ++i) {
    state += 0x9E3779B97F4A7C15ull;
    out.push_back(kFirstTokenId + static_cast<TokenId>(mix64(state) % span));
  }
}

Tokens TokenBlocks::block(uint64_t id) const {
  Tokens t;
  t.reserve(block_tokens_);
  append(id, block_tokens_, t);
  return t;
}

}  // namespace kvgate::loadgen
