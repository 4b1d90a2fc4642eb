// One request's generation state (the Scheduler extends it in
// scheduled_sequence.h): its tokens, its block table and how far the K/V in
// that table goes.
//
// tokens holds the prompt and then every generated token that will be fed
// back; positions [0, n_computed) have their K/V in the table, so the next
// step feeds tokens[n_computed:] at start_pos n_computed. That one rule
// covers prefill (the uncached suffix of the prompt) and decode (the one
// token sampled last step).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "cache/block_hash.h"
#include "engine/batch.h"
#include "engine/request.h"
#include "engine/sampler.h"
#include "engine/stop_condition.h"

namespace kvgate {

struct Sequence {
  Sequence(RequestId id_, Request req_, int32_t max_tokens, std::vector<TokenId> stop_ids, int32_t total_blocks_)
      : id(id_), req(std::move(req_)), tokens(req.prompt), total_blocks(total_blocks_), sampler(req.sampling),
        limit(max_tokens, std::move(stop_ids)) {
    result.id = id;
    result.prompt_tokens = static_cast<int32_t>(req.prompt.size());
  }

  int32_t n_prompt() const { return result.prompt_tokens; }

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
  TokenLimit limit;
  RequestResult result;
};

}  // namespace kvgate
