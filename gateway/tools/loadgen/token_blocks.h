// TokenBlocks: the token ids a block id stands for, the same on every run
// and every machine.
//
// A Mooncake hash id names one block of a prompt (and, through the chain,
// the prefix up to it); the trace carries no text. Each id becomes
// `block_tokens` pseudo-random ids drawn from a generator seeded by the id
// alone, so two requests that share ids share exactly those tokens, and
// therefore the server's blocks over them, while different ids give
// different tokens (a collision over a whole block is ~vocab^-block_tokens).
// The synthetic workload names its pieces (system prompts, user turns) with
// ids of its own and uses the same mapping.
//
// Ids are drawn from [kFirstTokenId, vocab_size): the low ids of the Llama
// vocabularies are <unk>, BOS and EOS, which a prompt should not be made of.
//
// Immutable; any thread.
#pragma once

#include <cstdint>

#include "cache/ids.h"

namespace kvgate::loadgen {

inline constexpr TokenId kFirstTokenId = 3;

// SplitMix64's finalizer: a bijective mix of 64 bits, used wherever an id
// must become well-spread bits (token draws, tenant and user choices).
uint64_t mix64(uint64_t x);

class TokenBlocks {
 public:
  // Throws kvgate::Error unless block_tokens >= 1 and vocab_size > kFirstTokenId.
  TokenBlocks(int32_t block_tokens, int32_t vocab_size, uint64_t seed = 0);

  int32_t block_tokens() const { return block_tokens_; }
  int32_t vocab_size() const { return vocab_size_; }

  // Appends the first `n` (<= block_tokens) ids of block `id`. The first n
  // ids of a block do not depend on n, so a request whose last block is
  // partial still shares that block's start with one that has it whole.
  void append(uint64_t id, int32_t n, Tokens& out) const;
  Tokens block(uint64_t id) const;

 private:
  int32_t block_tokens_;
  int32_t vocab_size_;
  uint64_t seed_;
};

}  // namespace kvgate::loadgen
