// Deterministic pseudo-random prompts for engine tests (xorshift32, so the
// same salt gives the same ids on every machine).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cache/ids.h"

namespace kvgate::testing {

// `n` token ids in [3, vocab): clear of the usual special ids 0-2.
inline Tokens some_tokens(size_t n, int32_t vocab, uint32_t salt) {
  Tokens t(n);
  uint32_t x = 2463534242u ^ (salt * 2654435761u);
  for (auto& id : t) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    id = static_cast<TokenId>(3 + x % static_cast<uint32_t>(vocab - 3));
  }
  return t;
}

}  // namespace kvgate::testing
