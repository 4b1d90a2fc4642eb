// What a request may use, decided once at submission: how many tokens it
// may generate and the most KV blocks it can ever hold. The Scheduler's
// submit() and the Engine's submit() (on the caller's thread, against its
// own copy of the bounds) refuse the same requests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/request.h"

namespace kvgate {

// What every request is checked against. Fixed once the pool exists, and
// copied by value: a copy can be read on any thread.
struct RequestBounds {
  int32_t context_length = 0;
  int32_t vocab_size = 0;
  int32_t block_size = 0;
  int32_t pool_blocks = 0;
};

// Pinned prefixes one request may ask for: Anthropic's four cache_control
// breakpoints, with room to spare; each costs a pass over its blocks.
inline constexpr size_t kMaxPinSpans = 8;

struct RequestLimits {
  int32_t max_tokens = 0;    // max_tokens, or what the context has room for
  int32_t total_blocks = 0;  // blocks for prompt + max_tokens - 1 positions
};

// Throws kvgate::Error for a request that can never run: no cache scope,
// empty prompt, no room left in the context, max_tokens beyond the room
// left, a token id outside the vocabulary, bad sampling parameters, an
// output grammar over another vocabulary, a pin that is not a prefix of the
// prompt with a positive ttl (or more than kMaxPinSpans of them), or more
// KV blocks (plus one spare, the copy-on-write target of a whole-prompt
// hit) than the pool has.
RequestLimits request_limits(const Request& req, const RequestBounds& b);

}  // namespace kvgate
