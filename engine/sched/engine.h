// Engine: the Scheduler on a thread of its own, behind a thread-safe inbox.
//
// The loop thread owns the scheduler, and through it the Backend, the KV
// pool and the prefix cache; no other thread touches them. Other threads
// only submit() and cancel(): both put a note in the inbox and wake the
// loop, which applies them at the next step boundary, so a cancelled
// request's blocks are back in the pool before the next forward pass.
// Tokens flow back through each request's RequestStream, which the loop only
// pushes to; what observers read of its state it publishes (stats()).
// Destroying the Engine (or shutdown()) cancels whatever is in flight,
// finishing every stream, and joins the loop.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "engine/engine_client.h"
#include "engine/sched/engine_stats.h"
#include "engine/sched/scheduler.h"

namespace kvgate {

struct EngineOptions {
  // Requests submitted and not yet finished (waiting or running) beyond
  // which submit() refuses with EngineBusy; 0 = no bound. A server turns the
  // refusal into 503 with Retry-After rather than queue without end.
  int64_t max_outstanding = 0;
};

class Engine : public EngineClient {
 public:
  Engine(std::unique_ptr<Backend> backend, SchedulerOptions opt, EngineOptions eng = {});
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Any thread. Throws kvgate::Error for a request that could never run
  // (checked here, against the engine's own copy of the bounds); otherwise
  // the returned stream yields its tokens and completion. The request's
  // arrival is stamped here, so TTFT includes its wait in the inbox. After
  // shutdown the stream finishes at once as cancelled. Throws EngineBusy
  // when max_outstanding requests are already in flight, EngineFailed once
  // the backend has failed for good.
  // `on_id`, when given, is told the request's id before the loop can see
  // the request, so that a callback which may want to cancel it (a stop
  // string) knows its id even if every token comes before submit() returns.
  std::shared_ptr<RequestStream> submit(Request req, Submitter who, RequestStream::Callback cb = {},
                                        const std::function<void(RequestId)>& on_id = {});
  // The EngineClient's start: submit() with the id told as placed here.
  RequestId start(Request req, Submitter who, RequestStream::Callback cb, const OnPlaced& placed) override {
    return submit(std::move(req), who, std::move(cb), [&placed](RequestId id) {
      if (placed) placed(id, {});
    })->id();
  }
  // Any thread. Applied at the next step boundary; unknown ids are ignored.
  void cancel(RequestId id) override;
  // Cancels everything in flight and joins the loop. Idempotent.
  void shutdown();

  // Blocks an allocation could get now (free + evictable), read by the loop
  // at its next step boundary, after the cancels sent before this call are
  // applied: with nothing in flight it is the whole pool. Any thread; waits
  // for the loop (at most one step).
  int32_t available_blocks();
  // The prefix cache's counters, read the same way.
  cache::CacheStats cache_stats();
  // The loop's state as it last published it: after a step at most every
  // kStatsInterval, whenever it goes idle, every second while idle with
  // pins (which expire), before a request's completion is told to its
  // consumer and before a control() returns. So a reader that has seen a
  // request finish, or a change applied, reads stats that hold it. Any
  // thread; never waits for the loop. What scrapes read.
  static constexpr std::chrono::milliseconds kStatsInterval{100};
  std::shared_ptr<const EngineStats> stats() const ABSL_LOCKS_EXCLUDED(stats_mu_);
  // Runs `look` on the loop thread between steps, after the cancels sent
  // before this call are applied, and returns when it has run. `look` must
  // not block. After shutdown it runs on the calling thread.
  void inspect(const std::function<void(const Scheduler&)>& look);
  // The same for the operator's changes (switch the eviction policy, flush a
  // tenant): `change` may modify the scheduler; exceptions it throws come
  // back to the caller.
  void control(const std::function<void(Scheduler&)>& change);
  // Blocks `tenant` has pinned, as of the last step boundary (the gateway's
  // quota check before a pin; the loop re-checks when it pins). Any thread,
  // never waits on the loop.
  int32_t pinned_blocks(TenantId tenant) const override;
  // All pins as of the last step boundary, with the scheduler's pin bounds.
  std::optional<PinRoom> pin_room() const override;
  int32_t num_blocks() const { return num_blocks_; }
  const RequestBounds& bounds() const override { return bounds_; }
  const std::optional<cache::KvIdentity>& cache_identity() const override { return identity_; }
  int64_t outstanding() const { return outstanding_.load(); }
  // Why the backend can run no more (see Backend::failure), or empty. Any thread.
  std::string failure() const override;

  int64_t steps() const { return steps_.load(); }
  int64_t preemptions() const { return preemptions_.load(); }

 private:
  struct Submission {
    Request req;
    Submitter who;
    std::shared_ptr<RequestStream> stream;
    SteadyClock::time_point arrival;
  };
  void loop() ABSL_LOCKS_EXCLUDED(mu_);
  bool has_work() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void drain(std::vector<Submission>& subs, std::vector<RequestId>& cancels);
  void run_step();

  std::unique_ptr<Scheduler> sched_;  // the loop thread's alone once started
  const RequestBounds bounds_;        // a copy: submit() checks requests without touching sched_
  const std::optional<cache::KvIdentity> identity_;  // a copy, for callers that hash at the edge
  const int32_t num_blocks_;
  Mutex mu_;
  CondVar wake_;
  std::vector<Submission> submissions_ ABSL_GUARDED_BY(mu_);
  std::vector<RequestId> cancels_ ABSL_GUARDED_BY(mu_);
  struct Query {
    const std::function<void(Scheduler&)>* change;
    std::promise<void> done;
  };
  void publish_pins() ABSL_LOCKS_EXCLUDED(pins_mu_);
  void publish_stats() ABSL_LOCKS_EXCLUDED(stats_mu_);
  std::vector<Query> queries_ ABSL_GUARDED_BY(mu_);  // answered after cancels_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Mutex join_mu_;                        // serializes shutdown()'s join (callers on several threads)
  const EngineOptions eng_;
  std::atomic<RequestId> next_id_{1};
  std::atomic<int64_t> outstanding_{0};  // streams handed out and not yet finished
  std::atomic<bool> failed_{false};
  mutable Mutex failure_mu_;
  std::string failure_ ABSL_GUARDED_BY(failure_mu_);
  std::atomic<int64_t> steps_{0}, preemptions_{0};  // published by the loop for observers
  uint64_t published_pin_changes_ = 0;  // the loop's own
  SteadyClock::time_point last_stats_{};  // the loop's own
  std::atomic<std::thread::id> loop_id_{};  // set by the loop when it starts
  mutable Mutex pins_mu_;
  std::unordered_map<TenantId, int32_t> pinned_ ABSL_GUARDED_BY(pins_mu_);  // published by the loop
  PinRoom pin_room_ ABSL_GUARDED_BY(pins_mu_);  // its bounds fixed at start, its count published by the loop
  mutable Mutex stats_mu_;
  std::shared_ptr<const EngineStats> stats_ ABSL_GUARDED_BY(stats_mu_);  // published by the loop
  std::thread thread_;                   // last: started once everything above exists
};

}  // namespace kvgate
