// The synthetic prefix-sharing workload: tenants x shared system prompts x
// users with multi-turn conversations, the shape a hosted API sees.
//
//   - every tenant has `users` users; user u talks under system prompt
//     u % system_prompts. The system prompts are the same token ids for
//     every tenant: each tenant's cache scope is its own, so tenant A's
//     copy never serves tenant B (the ideal counts one cold copy per tenant
//     and prompt);
//   - a conversation has `turns` turns; turn k's prompt is the system
//     prompt, then for each earlier turn its user message and its answer,
//     then turn k's own user message of `user_tokens`. The answer is a
//     deterministic stand-in of `output_tokens` ids, not the server's text:
//     the server streams text, and its ids would not survive a round trip
//     through text. So turn k+1 extends turn k's prompt exactly and can hit
//     its blocks; it does not hit the blocks the server filled while
//     generating turn k's answer;
//   - order: every user's turn 1 (users shuffled), then every user's turn 2
//     (shuffled again), ...; turn k+1 waits for turn k (PlannedRequest::after);
//   - arrivals: Poisson at request_rate over that order (infinity: all at
//     once, limited by the run's max concurrency).
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <limits>

#include "gateway/tools/loadgen/workload.h"

namespace kvgate::loadgen {

struct SyntheticSpec {
  int32_t tenants = 4;
  int32_t system_prompts = 2;
  int32_t system_tokens = 512;
  int32_t users = 4;  // per tenant
  int32_t turns = 3;
  int32_t user_tokens = 32;
  int32_t output_tokens = 16;
  double request_rate = std::numeric_limits<double>::infinity();
  int32_t vocab_size = 32000;
  uint64_t seed = 0;
};

// Throws kvgate::Error for values out of range (naming the option).
Workload synthetic_workload(const SyntheticSpec& s);

}  // namespace kvgate::loadgen
