// A generation request as the engine takes it, and what it reports when the
// request ends: the engine's public vocabulary, with finish_reason.h and
// submitter.h.
//
// Token ids in, token ids out: tokenizing, chat templates and stop strings
// belong to the caller (the gateway), which cancels a request when its text
// matches a stop string.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/block_hash.h"
#include "cache/hash128.h"
#include "cache/ids.h"
#include "engine/finish_reason.h"
#include "engine/grammar/constrained_output.h"
#include "engine/sampling/sampling_params.h"
#include "policies/ids.h"

namespace kvgate {

// The prompt's first `tokens` tokens, pinned for `ttl` (Request::pins). Only
// full blocks are cached, so a span pins floor(tokens / block size) blocks.
struct PinSpan {
  int32_t tokens = 0;
  std::chrono::seconds ttl{0};
  bool operator==(const PinSpan&) const = default;
};

struct Request {
  Tokens prompt;                  // already tokenized (BOS included if wanted); at least one token
  SamplingParams sampling;
  // 0 = as many as the context has room for; more than the room left after
  // the prompt is refused (the OpenAI API answers 400), never clamped.
  int32_t max_tokens = 0;
  std::vector<TokenId> stop_ids;  // end the generation (not part of the output)
  bool ignore_eos = false;        // else the scheduler's EOS id is a stop id too
  // Prefix cache keying: the scope is assigned by the server (per tenant,
  // from its secret), never taken from the client. There is no default: a
  // request without a scope is refused, so no caller can put every tenant
  // into one scope by forgetting it. The salt is the client's optional
  // cache_salt, which narrows reuse inside the scope.
  std::optional<cache::ScopeId> scope;
  std::string cache_salt;
  bool use_cache = true;          // false: neither reuse cached blocks nor cache this request's
  // The links of the prompt's full blocks when the caller hashed them at the
  // edge (the gateway does, so that a router can place a request by its
  // chain): cache::extend_chain from chain_seed(scope, model fingerprint,
  // block size, cache_salt). Empty: the scheduler hashes the prompt itself.
  // Every hit is still verified against the block's tokens, so a wrong
  // chain can only miss; one of the wrong length is refused.
  std::vector<cache::BlockHash> prompt_chain;
  // Prefixes of the prompt to keep pinned after the request ends (none: no
  // pin): the full blocks within each span cannot be evicted for its ttl,
  // and each hit on them restarts the clock. A block in several spans keeps
  // the longest ttl. All or nothing: counted against the submitter's cache
  // and pin quotas and the pool's cap on pins, and refused
  // (RequestResult::pin_refused) when any would be exceeded.
  std::vector<PinSpan> pins;
  // Constrained decoding: every generated token is one the grammar allows
  // (the rest of the row is masked before sampling), and the request ends
  // with finish kStop once the grammar's value is whole. None: free text.
  // The masker must be of this model's vocabulary (its size is checked).
  std::optional<grammar::OutputGrammar> output_grammar;
  // A placement hint for a router in front of many engines (0: none):
  // requests with the same key go to the same engine while it has room
  // (prompt_cache_key, hashed with the tenant's scope at the edge). An
  // engine ignores it; it never changes what is computed or cached.
  uint64_t placement_key = 0;
};

// The token accounting of a request (DESIGN invariant 4):
//   prompt_tokens = cached_tokens + fresh_prefill_tokens, always.
// cached_tokens counts the prompt positions whose K/V came from the cache
// instead of a forward pass. Only full blocks are shared, so it is a whole
// number of blocks (matched blocks x block size), except when every prompt
// token is in matched blocks: the last prompt token is still run to get the
// logits for the first output token (its K/V recomputed into a private copy
// of the last block), so cached = prompt - 1 and fresh = 1.
struct RequestResult {
  RequestId id = 0;
  Tokens output;                  // generated ids (a stop id is not included)
  FinishReason finish = FinishReason::kStop;
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;
  // cached_tokens by the tier each came from, counted where the scheduler
  // splits the admission's hits (cached = device + host + disk): hits in
  // the device pool, and blocks restored from the host and the disk tier.
  int32_t cached_device_tokens = 0;
  int32_t cached_host_tokens = 0;
  int32_t cached_disk_tokens = 0;
  int32_t fresh_prefill_tokens = 0;
  // Tokens this request wrote into the cache (committed blocks x block
  // size), in tokens as tenancy bills them.
  int32_t cache_written_tokens = 0;
  // The scheduler's preemptions: each freed the request's blocks and later
  // recomputed what the cache no longer held. The accounting above is that
  // of the first admission; recomputed tokens are the engine's cost, not
  // the tenant's prompt.
  int32_t preemptions = 0;
  int32_t recomputed_tokens = 0;
  // After a preemption: positions brought back from the tiers below the
  // device instead of recomputed (preemption by swap).
  int32_t resumed_restored_tokens = 0;
  // A pinned request's prompt tokens in pinned blocks (billed as written to
  // the cache: cache_written_tokens is at least this), or why not.
  int32_t pinned_tokens = 0;
  bool pin_refused = false;  // the submitter's cache quota had no room for the pin
};

}  // namespace kvgate
