// A Mooncake trace replayed at a size this machine can serve.
//
// The trace's blocks are 512 tokens and its prompts average 12k tokens over
// an hour; a ~110M model on two CPU cores prefills about a thousand tokens
// a second. So everything scales:
//   - each hash id becomes `block_tokens` tokens (TokenBlocks), and a
//     prompt is its ids' blocks in order, the last one cut to the scaled
//     share of the trace's last block: prompt length ~ input_length *
//     block_tokens / 512, and requests that share k ids share exactly k
//     scaled blocks (with block_tokens a multiple of the server's block
//     size, k * block_tokens / B whole server blocks);
//   - output tokens = output_length * output_scale (default block_tokens /
//     512, the prompt's factor), at least 1, at most max_output_tokens;
//   - arrival = (timestamp - the first kept timestamp) * time_scale / 1000 s;
//   - a window: requests from start_ms on, at most max_requests;
//   - users: the trace has none, so a request's user is its conversation,
//     the id of its second block (the first, id 0, is the prefix every
//     request shares); keeping one user in `sample_users` thins the load
//     while keeping each kept conversation whole, and with it the reuse a
//     short contiguous window would lose (turns of one conversation are
//     minutes apart);
//   - tenants: each user belongs to one of `tenants`, by a hash of its id
//     independent of the sampling hash, so every tenant keeps users.
// max_prompt_tokens cuts longer prompts to their prefix (the model's
// context is the limit); 0 leaves them whole.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gateway/tools/trace/trace_reader.h"
#include "gateway/tools/loadgen/workload.h"

namespace kvgate::loadgen {

struct TraceScaling {
  int32_t block_tokens = 16;
  double time_scale = 1.0;
  double output_scale = -1;  // < 0: block_tokens / trace block tokens
  int32_t max_output_tokens = 0;
  int32_t max_prompt_tokens = 0;
  int64_t start_ms = 0;
  int64_t max_requests = 0;  // 0: all in the window
  int32_t sample_users = 1;
  int32_t tenants = 1;
  int32_t vocab_size = 32000;
  uint64_t seed = 0;  // of the token blocks
  int64_t trace_block_tokens = trace::kMooncakeBlockTokens;
  std::string source = "trace";  // named in the description
};

// The conversation a record belongs to (see above).
uint64_t trace_user(const trace::TraceRecord& r);

// Throws kvgate::Error for scaling values out of range (naming the option).
Workload trace_workload(const std::vector<trace::TraceRecord>& trace, const TraceScaling& s);

}  // namespace kvgate::loadgen
