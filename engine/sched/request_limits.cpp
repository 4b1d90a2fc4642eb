// Request validation and sizing; pure, any thread.
#include "engine/sched/request_limits.h"

#include <string>

#include "base/error.h"

namespace kvgate {

RequestLimits request_limits(const Request& req, const RequestBounds& b) {
  if (!req.scope) throw Error("the request has no cache scope (the server assigns one per tenant)");
  const auto n_prompt = static_cast<int64_t>(req.prompt.size());
  if (n_prompt == 0) throw Error("the prompt is empty");
  if (n_prompt >= b.context_length)
    throw Error("the prompt has " + std::to_string(n_prompt) + " tokens; the model's context is " +
                std::to_string(b.context_length) + " tokens and must leave room for at least one more");
  for (TokenId id : req.prompt)
    if (id < 0 || id >= b.vocab_size) throw Error("token id " + std::to_string(id) + " is outside the vocabulary");
  const auto room = static_cast<int32_t>(b.context_length - n_prompt);
  if (req.max_tokens < 0) throw Error("max_tokens must not be negative");
  if (req.pins.size() > kMaxPinSpans)
    throw Error("a request pins at most " + std::to_string(kMaxPinSpans) + " prefixes, not " +
                std::to_string(req.pins.size()));
  for (const PinSpan& p : req.pins) {
    if (p.ttl.count() <= 0) throw Error("a pin's time to live must be positive");
    if (p.tokens < 1 || p.tokens > n_prompt)
      throw Error("a pin spans " + std::to_string(p.tokens) + " tokens of a prompt of " + std::to_string(n_prompt));
  }
  if (req.max_tokens > room)
    throw Error("max_tokens is " + std::to_string(req.max_tokens) + " but the context of " +
                std::to_string(b.context_length) + " tokens leaves room for " + std::to_string(room) +
                " after the prompt's " + std::to_string(n_prompt));
  validate(req.sampling);
  if (const auto& g = req.output_grammar) {
    if (!g->grammar || !g->masker) throw Error("the output grammar has no grammar or no vocabulary masker");
    if (g->masker->vocab_size() != static_cast<size_t>(b.vocab_size))
      throw Error("the output grammar's vocabulary has " + std::to_string(g->masker->vocab_size()) +
                  " tokens; the model's has " + std::to_string(b.vocab_size));
  }
  RequestLimits l;
  l.max_tokens = req.max_tokens > 0 ? req.max_tokens : room;
  // The last generated token is never fed back, so its K/V needs no slot.
  l.total_blocks = static_cast<int32_t>((n_prompt + l.max_tokens - 1 + b.block_size - 1) / b.block_size);
  if (l.total_blocks + 1 > b.pool_blocks)
    throw Error("the request needs " + std::to_string(l.total_blocks) + " KV blocks (plus one spare); the pool has " +
                std::to_string(b.pool_blocks));
  return l;
}

}  // namespace kvgate
