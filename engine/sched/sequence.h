// One request inside the Scheduler: its tokens, its block table and how far
// the K/V in that table goes, its hash chain, sampler and token limit, and
// what scheduling needs (tenant and priority, stream, admission, timing).
//
// tokens holds the prompt and then every generated token that will be fed
// back; positions [0, n_computed) have their K/V in the table, so the next
// step feeds tokens[n_computed:] at start_pos n_computed. That one rule
// covers prefill (the uncached suffix of the prompt) and decode (the one
// token sampled last step).
//
// Thread ownership: the scheduler's driving thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "cache/block_hash.h"
#include "engine/grammar/constrained_output.h"
#include "engine/request.h"
#include "engine/sampling/sampler.h"
#include "engine/sched/request_stream.h"
#include "engine/sched/request_timing.h"
#include "engine/sched/token_limit.h"
#include "engine/submitter.h"

namespace kvgate {

struct Sequence {
  Sequence(RequestId id_, Request req_, int32_t max_tokens, std::vector<TokenId> stop_ids, int32_t total_blocks_)
      : id(id_), req(std::move(req_)), tokens(req.prompt), total_blocks(total_blocks_), sampler(req.sampling),
        limit(max_tokens, std::move(stop_ids)) {
    if (req.output_grammar) constrained.emplace(*req.output_grammar);
    result.id = id;
    result.prompt_tokens = static_cast<int32_t>(req.prompt.size());
  }

  int32_t n_prompt() const { return result.prompt_tokens; }
  const cache::ScopeId& scope() const { return *req.scope; }  // validated present at submission

  RequestId id;
  Request req;
  bool caching = false;                 // looks up and commits blocks
  Tokens tokens;
  std::vector<BlockId> table;
  int32_t n_computed = 0;
  // Hash chain of the full blocks so far (the prompt's at admission, then
  // extended as generated tokens fill blocks), chained from seed.
  cache::BlockHash seed;
  std::vector<cache::BlockHash> chain;
  int32_t n_settled_blocks = 0;         // leading blocks that need no commit: shared hits, or committed
  int32_t total_blocks;                 // the most blocks it can ever hold (prompt + max_tokens - 1 positions)
  Sampler sampler;
  std::optional<grammar::ConstrainedOutput> constrained;  // the request's output grammar, if any
  TokenLimit limit;
  RequestResult result;

  Submitter who;
  std::shared_ptr<RequestStream> stream;
  RequestTiming timing;
  int64_t admission = 0;       // the scheduler's admission count when last admitted: larger = more recent
  bool ever_admitted = false;  // the token accounting is that of the first admission
  int32_t n_prefix_hit = 0;    // cached prefix blocks at enqueue (FairQueue's estimate)
  int32_t n_lost = 0;          // n_computed when last preempted (to count recomputation)
};

}  // namespace kvgate
