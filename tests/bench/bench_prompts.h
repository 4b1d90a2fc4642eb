// Deterministic prompts for the benchmarks: random token ids (above the
// special tokens), the same on every machine, so that no two prompts share a
// prefix by accident unless a benchmark builds one on purpose.
#pragma once

#include <cstdint>

#include "cache/ids.h"

namespace kvgate {

inline Tokens bench_prompt(int32_t n, int32_t vocab, uint32_t salt) {
  Tokens t(static_cast<size_t>(n));
  uint32_t x = 2463534242u ^ (salt * 2654435761u);  // xorshift32, seeded per prompt
  for (auto& id : t) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    id = static_cast<TokenId>(3 + x % static_cast<uint32_t>(vocab - 3));
  }
  return t;
}

}  // namespace kvgate
