// What a request may use, decided once at submission: how many tokens it
// may generate and the most KV blocks it can ever hold. The scheduler's
// submit() and validate() both use it, so they refuse the same requests.
#pragma once

#include <cstdint>

#include "engine/model_config.h"
#include "engine/request.h"

namespace kvgate {

struct RequestLimits {
  int32_t max_tokens = 0;    // max_tokens, or what the context has room for
  int32_t total_blocks = 0;  // blocks for prompt + max_tokens - 1 positions
};

// Throws kvgate::Error for a request that can never run: empty prompt, no
// room left in the context, a token id outside the vocabulary, bad sampling
// parameters, or more KV blocks (plus one spare, the copy-on-write target of
// a whole-prompt hit) than a pool of `pool_blocks` has.
RequestLimits request_limits(const Request& req, const ModelConfig& c, int32_t block_size, int32_t pool_blocks);

}  // namespace kvgate
