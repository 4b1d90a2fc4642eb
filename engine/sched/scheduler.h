// Scheduler: continuous batching over one Backend and one prefix cache,
// driven one step() at a time by a single thread (the Engine's loop, or a
// test calling step() directly and counting steps).
//
// Each step packs, under a token budget (max_step_tokens):
//   1. one decode token for every running sequence that is decoding, and the
//      next chunk of every running sequence still prefilling (oldest first);
//   2. then, while budget, blocks and max_running allow, newly admitted
//      requests, in the FairQueue's order (fair share of tokens across
//      tenants; priority first; optionally longest cached prefix first).
// A prompt is admitted chunk by chunk (Sarathi / vLLM v1 chunked prefill):
// its matched prefix blocks are shared, and private blocks are allocated
// only as positions are reached, never reserved up front. With
// chunked_prefill off, a prompt's uncached part runs whole in the step that
// admits it, even past the budget (which then only stops further admissions
// that step): that is what makes the other sequences' ITL spike.
//
// When a block cannot be allocated, the lowest-priority, most recently
// admitted running sequence not yet scheduled this step is preempted:
// its blocks are released tail first (full ones were committed, so they stay
// cached and its re-admission usually hits), it keeps its generated tokens
// and sampler state, and it goes back to the head of its tenant's queue, to
// be recomputed (vLLM v1's recompute preemption). Outputs are unchanged.
//
// With tiers below the device, blocks go down and come back up through a
// TierExchange (tier_exchange.h): the scheduler hands it each block it
// commits, and at admission takes the blocks it restores as ordinary hits.
//
// With KVGATE_CHECK_INVARIANTS (the sanitizer build) every step ends with
// check_invariants().
//
// Thread ownership: not thread-safe; everything runs on the driving thread.
// Other threads validate requests against a copy of bounds().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/block_hash.h"
#include "cache/block_pool.h"
#include "cache/tiers/kv_identity.h"
#include "cache/tiers/tier_mover.h"
#include "engine/backend.h"
#include "engine/request.h"
#include "engine/sched/backend_block_copier.h"
#include "engine/sched/request_limits.h"
#include "engine/sched/request_stream.h"
#include "engine/sched/tier_exchange.h"
#include "engine/submitter.h"
#include "policies/admission/fair_queue.h"

namespace kvgate {

struct Sequence;

struct SchedulerOptions {
  cache::ModelFingerprint model;                     // cache_fingerprint(weights, backend's KV layout)
  bool prefix_cache = true;
  TokenId eos = -1;                                  // the tokenizer's EOS id (-1: none)
  int32_t max_step_tokens = 512;                     // tokens per forward pass (decodes + prefill chunks)
  // Sequences running at once; 0 = as many as the budget. Clamped to
  // max_step_tokens, so that every running sequence can decode every step.
  int32_t max_running = 256;
  bool chunked_prefill = true;
  policies::FairQueueOptions order;                  // prefer_cached_prefix etc.
  std::unique_ptr<policies::EvictionPolicy> policy;  // null = LRU
  cache::BlockHashFn hash_fn = cache::hash_block;
  // The host and disk tiers below the device pool (tier_identity.h says
  // what identity they must have been opened with); none: an evicted block
  // is forgotten.
  cache::LowerTiers tiers;
  // Told every block the device pool stores or removes (cache/block_event.h),
  // on the engine loop; null: no one. Must outlive the scheduler.
  cache::BlockEventListener* block_events = nullptr;
  // When pins expire; tests pass their own, so that none of them waits.
  std::function<SteadyClock::time_point()> clock = [] { return SteadyClock::now(); };
  // Pinned blocks cannot be evicted, so pins are bounded twice, in percent
  // of the device pool: all pins together (past it a pin is refused, so
  // that pins can never take the pool and stall admission for everyone),
  // and one tenant's by default (a Submitter's pin_quota_blocks of 0).
  int32_t max_pinned_percent = 50;
  int32_t tenant_pinned_percent = 10;
};

// What one step did, for tests (which count steps) and benchmarks.
struct StepReport {
  int64_t step = 0;                  // this step's number (1, 2, ...)
  int32_t decode_tokens = 0;
  int32_t prefill_tokens = 0;
  int32_t admitted = 0;
  int32_t preempted = 0;
  std::vector<RequestId> finished;   // finished this step (cancellations excluded)
};

class Scheduler {
 public:
  Scheduler(std::unique_ptr<Backend> backend, SchedulerOptions opt);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // What requests are checked against (request_limits.h); immutable.
  RequestBounds bounds() const;
  // The cache's identity: what a caller needs to hash a prompt's chain as
  // the scheduler would (Request::prompt_chain: the model fingerprint and
  // the block size), the same identity the tiers below the device are
  // opened with; none when the prefix cache is off. Immutable.
  std::optional<cache::KvIdentity> cache_identity() const;

  // Checks the request (request_limits(): throws kvgate::Error for one that
  // could never run), then queues it. `stream` receives the tokens and the
  // completion, and its id() is the request's id (the Engine numbers them);
  // when null, one is made with the scheduler's next id. `arrival` is when
  // the request reached the engine (the Engine stamps it in its submit());
  // by default, now. Returns the stream.
  std::shared_ptr<RequestStream> submit(Request req, Submitter who, std::shared_ptr<RequestStream> stream = nullptr,
                                        std::optional<SteadyClock::time_point> arrival = std::nullopt);

  // Ends a waiting or running request now: its blocks go back, its stream
  // finishes as cancelled. False if unknown or already finished.
  bool cancel(RequestId id);
  // Cancels everything (shutdown).
  void cancel_all();
  // Ends everything in flight with an error (the backend failed).
  void fail_all(const std::string& why);

  StepReport step();

  bool idle() const { return waiting_.empty() && running_.empty(); }
  size_t waiting() const { return waiting_.size(); }
  size_t running() const { return running_.size(); }
  int64_t steps() const { return step_no_; }
  int64_t preemptions() const { return preemptions_; }

  const cache::BlockPool& pool() const { return pool_; }
  // The most blocks all pins together may hold, and one tenant's pins when
  // its Submitter names no quota (SchedulerOptions' percentages); immutable.
  int32_t max_pinned_blocks() const { return max_pinned_blocks_; }
  int32_t tenant_pinned_blocks() const { return tenant_pinned_blocks_; }
  // Null without lower tiers.
  const cache::TierMover* mover() const { return tiers_.mover(); }
  const RestoreCounters& restores() const { return tiers_.restores(); }
  // Waits for every copy down under way and takes its blocks back: for
  // tests and benchmarks that then look in the tiers, and at shutdown.
  void settle_tiers() { tiers_.settle(); }
  // The operator's controls (the engine loop runs them between steps).
  void set_eviction_policy(std::unique_ptr<policies::EvictionPolicy> policy) { pool_.set_policy(std::move(policy)); }
  cache::BlockPool::TenantEviction evict_tenant(TenantId tenant, bool pins) { return pool_.evict_tenant(tenant, pins); }
  // Unpins what has expired by opt.clock (also done at every step).
  int32_t expire_pins() { return pool_.expire_pins(opt_.clock()); }
  // Block stored/removed events go to `l` (null: none); it must outlive the
  // scheduler or be unset first. Called on the driving thread.
  void set_block_listener(cache::BlockEventListener* l) { pool_.set_listener(l); }
  Backend& backend() { return *backend_; }
  const policies::FairQueue& queue() const { return queue_; }
  // Pool invariants plus: every running sequence references every block in
  // its table, holds no more blocks than its positions can need, and shares
  // cached blocks only at the depth and scope they were cached for; waiting
  // ones hold none. Throws std::logic_error.
  void check_invariants() const;

 private:
  using Seq = Sequence;
  struct Planned {
    Seq* seq;
    int32_t n;  // tokens fed this step
  };

  void schedule_running(StepReport& rep);
  void admit_waiting(StepReport& rep);
  bool try_admit(Seq& s);
  struct AdmitPlan;
  AdmitPlan plan_admission(Seq& s, std::vector<BlockId> hits) const;
  void copy_on_write_last(Seq& s);
  void settle_first_admission(Seq& s, int32_t cached);
  int32_t chunk_for(int32_t pending) const;
  bool grow_to(Seq& s, int32_t positions);
  size_t pick_victim(size_t first) const;
  void preempt(size_t index);
  void run_planned(StepReport& rep);
  struct Sampled {
    TokenId token = 0;
    bool output = true;                // goes to the client (a stop token does not)
    std::optional<FinishReason> ends;  // the request ends with it
  };
  Sampled sample(Seq& s, std::span<const float> row);
  void release_blocks(Seq& s);
  void finish(Seq& s, FinishReason why, const std::string& error = {});
  void ensure_chain(Seq& s);
  void adopt_prompt_chain(Seq& s);
  void commit_full_blocks(Seq& s);
  void pin_prompt(Seq& s);

  std::unique_ptr<Backend> backend_;
  BackendBlockCopier copier_;  // the backend as the cache sees it (copy-on-write)
  SchedulerOptions opt_;
  const int32_t block_size_;
  cache::BlockPool pool_;
  const int32_t max_pinned_blocks_;
  const int32_t tenant_pinned_blocks_;
  policies::FairQueue queue_;
  // After pool_ and copier_: its mover's threads stop before what they read goes.
  TierExchange tiers_;
  RequestId next_id_ = 1;
  int64_t step_no_ = 0;
  int64_t preemptions_ = 0;
  int64_t admissions_ = 0;  // admission order, for choosing a victim
  std::unordered_map<RequestId, std::unique_ptr<Seq>> waiting_;  // by id; order is queue_'s
  std::vector<std::unique_ptr<Seq>> running_;                    // in admission order
  // Per-step scratch.
  int32_t budget_ = 0;
  std::vector<Planned> plan_;
  std::vector<SequenceStep> batch_;  // what forward() runs this step: each sequence's new tokens
  Logits logits_;
  std::vector<float> masked_;  // a constrained sequence's row of logits, masked
};

}  // namespace kvgate
