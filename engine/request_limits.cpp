// Request validation and sizing; pure, any thread.
#include "engine/request_limits.h"

#include <algorithm>
#include <string>

#include "engine/error.h"

namespace kvgate {

RequestLimits request_limits(const Request& req, const ModelConfig& c, int32_t block_size, int32_t pool_blocks) {
  const auto n_prompt = static_cast<int64_t>(req.prompt.size());
  if (n_prompt == 0) throw Error("the prompt is empty");
  if (n_prompt >= c.context_length)
    throw Error("the prompt has " + std::to_string(n_prompt) + " tokens; the model's context is " +
                std::to_string(c.context_length) + " tokens and must leave room for at least one more");
  for (TokenId id : req.prompt)
    if (id < 0 || id >= c.vocab_size) throw Error("token id " + std::to_string(id) + " is outside the vocabulary");
  if (req.max_tokens < 0) throw Error("max_tokens must not be negative");
  validate(req.sampling);
  const auto room = static_cast<int32_t>(c.context_length - n_prompt);
  RequestLimits l;
  l.max_tokens = req.max_tokens > 0 ? std::min(req.max_tokens, room) : room;
  // The last generated token is never fed back, so its K/V needs no slot.
  l.total_blocks = static_cast<int32_t>((n_prompt + l.max_tokens - 1 + block_size - 1) / block_size);
  if (l.total_blocks + 1 > pool_blocks)
    throw Error("the request needs " + std::to_string(l.total_blocks) + " KV blocks (plus one spare); the pool has " +
                std::to_string(pool_blocks));
  return l;
}

}  // namespace kvgate
