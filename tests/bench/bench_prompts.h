// Deterministic prompts for the benchmarks: random token ids (above the
// special tokens), the same on every machine, so that no two prompts share a
// prefix by accident unless a benchmark builds one on purpose; and the
// one-token request the TTFT benchmarks time.
#pragma once

#include <cstdint>
#include <utility>

#include "cache/ids.h"
#include "engine/request.h"

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

// a followed by b: a prompt that shares a's tokens as its prefix.
inline Tokens concat(Tokens a, const Tokens& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A greedy request for `prompt`'s first token alone, in `scope`: its time
// from submit() to that token is the TTFT.
inline Request first_token_request(Tokens prompt, cache::ScopeId scope) {
  Request r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = 1;
  r.ignore_eos = true;
  r.scope = scope;
  return r;
}

}  // namespace kvgate
