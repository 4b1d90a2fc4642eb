// BatchRunner: several requests at once over one Backend and one prefix
// cache, in batched steps.
//
//   add(request)    validate and queue (waiting)
//   step()          admit() the waiting requests that fit, then one forward
//                   pass over every running request (each feeds its uncached
//                   prompt suffix, or the token it sampled last step), then
//                   sample, commit the blocks that filled, and finish the
//                   requests that ended
//   take_result(id) the finished request's output and token accounting
//
// At admission the prompt's hash chain is looked up in the pool; the matched
// blocks are shared into the request's block table and only the rest of the
// prompt is prefilled. If every prompt token is matched, the last token is
// still run for its logits: its block is first copied into a private block
// (copy-on-write), so no shared block is ever written. Blocks the request
// fills, prompt or generated, are committed to the cache as they fill, so
// the next turn of a conversation reuses the previous answer too.
//
// Admission reserves every block a request can need (prompt + max_tokens - 1
// positions, less the shared ones), so a running request never runs out of
// blocks and needs no preemption; blocks are allocated as positions are
// reached, so cached blocks stay evictable as long as possible.
//
// The serving path is the Scheduler (scheduler.h: chunked prefill, blocks
// allocated without reservations, preemption, tenant fairness, streams) on
// the Engine's thread; this runner stays as the simpler reserve-up-front
// driver that the prefix cache's tests and benchmark use. Both validate
// requests (request_limits.h) and commit blocks (block_commit.h) alike.
//
// Thread ownership: not thread-safe. One thread drives a runner.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/block_hash.h"
#include "cache/block_pool.h"
#include "engine/backend.h"
#include "engine/request.h"

namespace kvgate {

struct Sequence;

struct RunnerOptions {
  cache::ModelFingerprint model;                     // model_fingerprint(model): computed once at load
  bool prefix_cache = true;                          // false: no request reuses or caches blocks
  TokenId eos = -1;                                  // the tokenizer's EOS id (-1: none)
  int32_t max_running = 0;                           // requests per step; 0 = as many as fit
  std::unique_ptr<policies::EvictionPolicy> policy;  // null = LRU
  cache::BlockHashFn hash_fn = cache::hash_block;    // a seam: tests force collisions
};

struct TokenEvent {
  RequestId id;
  TokenId token;
};

struct StepResult {
  std::vector<TokenEvent> tokens;     // tokens generated this step, in batch order
  std::vector<RequestId> finished;    // requests that ended this step (results ready)
};

class BatchRunner {
 public:
  BatchRunner(std::unique_ptr<Backend> backend, RunnerOptions opt);
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // Throws kvgate::Error for a request that can never run: empty prompt, no
  // room left in the context, a token id outside the vocabulary, bad
  // sampling parameters, or more KV blocks than the pool has.
  RequestId add(Request req);

  // Admits waiting requests, oldest first, while their blocks fit (stops at
  // the first that does not). Returns how many were admitted.
  int32_t admit();

  // admit(), then one forward pass over the running requests. With nothing
  // to run, returns an empty result.
  StepResult step();

  // Ends a waiting or running request; its blocks go back tail first. False
  // if the id is unknown or already finished.
  bool cancel(RequestId id);

  // The result of a finished (or cancelled) request, once.
  std::optional<RequestResult> take_result(RequestId id);

  bool idle() const { return waiting_.empty() && running_.empty(); }
  size_t waiting() const { return waiting_.size(); }
  size_t running() const { return running_.size(); }

  cache::CacheStats cache_stats() const { return pool_.stats(); }
  void set_block_listener(cache::BlockEventListener* l) { pool_.set_listener(l); }
  Backend& backend() { return *backend_; }
  const cache::BlockPool& pool() const { return pool_; }

  // The pool's invariants plus the runner's: every running request's blocks
  // are referenced, and the reservations fit in what the pool can allocate.
  // Throws std::logic_error. For tests.
  void check_invariants() const;

 private:
  bool try_admit(Sequence& s);
  void allocate_block(Sequence& s);
  void grow_tables();
  void run_batch(StepResult& out);
  void commit_full_blocks(Sequence& s);
  void finish(Sequence& s, FinishReason why, bool cancelled);

  std::unique_ptr<Backend> backend_;
  RunnerOptions opt_;
  const int32_t block_size_;
  cache::BlockPool pool_;
  RequestId next_id_ = 1;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;
  int64_t reserved_ = 0;  // sum of running requests' reserved blocks
  std::unordered_map<RequestId, RequestResult> results_;
  // Per-step scratch.
  std::vector<SequenceStep> steps_;
  Logits logits_;
};

}  // namespace kvgate
