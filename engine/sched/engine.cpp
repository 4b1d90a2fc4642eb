// Invariants: every stream handed out by submit() is finished exactly once,
// by the loop (completion, cancellation, error, or shutdown), or by submit()
// itself when the engine is already stopping. Once stopping_ is set no
// submission is accepted, so the loop's final cancel_all() leaves nothing
// behind.
//
// Every query is answered: the loop answers what it swapped out of the inbox
// before it can return, and none is queued once stopping_ is set.
//
// No exception leaves the loop: a failed step ends the requests in flight
// with its error, and if even that fails the loop logs it and goes on (the
// requests not yet ended fail again at the next step).
//
// Thread ownership: sched_ belongs to the loop thread (and to whoever joined
// it, afterwards); the inbox fields are guarded by mu_ (checked by clang's
// -Wthread-safety); steps_/preemptions_ are atomics written by the loop;
// the published pins and stats are guarded by their own mutexes, which the
// loop holds only to swap in a value built outside them.
#include "engine/sched/engine.h"

#include <cstdio>
#include <exception>
#include <string>

namespace kvgate {

Engine::Engine(std::unique_ptr<Backend> backend, SchedulerOptions opt, EngineOptions eng)
    : sched_(std::make_unique<Scheduler>(std::move(backend), std::move(opt))),
      bounds_(sched_->bounds()),
      identity_(sched_->cache_identity()),
      num_blocks_(sched_->pool().num_blocks()),
      eng_(eng),
      pin_room_{0, sched_->max_pinned_blocks(), sched_->tenant_pinned_blocks()},
      stats_(std::make_shared<const EngineStats>(read_engine_stats(*sched_))),
      thread_([this] { loop(); }) {}

Engine::~Engine() { shutdown(); }

std::shared_ptr<RequestStream> Engine::submit(Request req, Submitter who, RequestStream::Callback cb,
                                              const std::function<void(RequestId)>& on_id) {
  const SteadyClock::time_point arrival = SteadyClock::now();
  (void)request_limits(req, bounds_);  // on the caller's thread: bad input is the caller's error, not the loop's
  if (failed_.load()) throw EngineFailed("the engine's backend failed and takes no more work: " + failure());
  if (const int64_t before = outstanding_.fetch_add(1); eng_.max_outstanding > 0 && before >= eng_.max_outstanding) {
    outstanding_.fetch_sub(1);
    throw EngineBusy("the engine has " + std::to_string(eng_.max_outstanding) +
                     " requests in flight, its limit; try again shortly");
  }
  // Counted out when the stream finishes, whoever finishes it, before the
  // consumer's own callback (which may throw) runs.
  // On the loop, the stats are published first, so that whoever the
  // consumer tells (a client, with its usage) reads stats that hold the
  // request (metrics that agree with the ledger and the response).
  auto counted = [this, cb = std::move(cb)](TokenId t, const Completion* done) {
    if (done) {
      outstanding_.fetch_sub(1);
      if (std::this_thread::get_id() == loop_id_.load()) publish_stats();
    }
    if (cb) cb(t, done);
  };
  auto stream = std::make_shared<RequestStream>(next_id_++, std::move(counted));
  if (on_id) on_id(stream->id());
  {
    MutexLock lock(mu_);
    if (!stopping_) {
      submissions_.push_back({std::move(req), who, stream, arrival});
      wake_.notify_one();
      return stream;
    }
  }
  Completion c;
  c.result.id = stream->id();
  c.result.finish = FinishReason::kCancelled;
  c.result.prompt_tokens = c.result.fresh_prefill_tokens = static_cast<int32_t>(req.prompt.size());
  stream->finish(std::move(c));
  return stream;
}

void Engine::cancel(RequestId id) {
  MutexLock lock(mu_);
  cancels_.push_back(id);
  wake_.notify_one();
}

void Engine::inspect(const std::function<void(const Scheduler&)>& look) {
  control([&look](Scheduler& s) { look(s); });
}

void Engine::control(const std::function<void(Scheduler&)>& change) {
  std::future<void> answer;
  {
    MutexLock lock(mu_);
    if (!stopping_) {
      queries_.push_back({&change, {}});
      answer = queries_.back().done.get_future();
      wake_.notify_one();
    }
  }
  if (answer.valid()) return answer.get();  // rethrows what `change` threw
  shutdown();  // stopping: once the loop is joined the scheduler is ours
  change(*sched_);
}

int32_t Engine::pinned_blocks(TenantId tenant) const {
  MutexLock lock(pins_mu_);
  const auto it = pinned_.find(tenant);
  return it == pinned_.end() ? 0 : it->second;
}

std::optional<PinRoom> Engine::pin_room() const {
  MutexLock lock(pins_mu_);
  return pin_room_;
}

void Engine::publish_pins() {
  std::unordered_map<TenantId, int32_t> now;
  for (const auto& [tenant, ts] : sched_->pool().stats().tenants)
    if (ts.blocks_pinned > 0) now[tenant] = static_cast<int32_t>(ts.blocks_pinned);
  const int32_t all = sched_->pool().pinned_blocks();
  MutexLock lock(pins_mu_);
  pinned_.swap(now);
  pin_room_.pinned = all;
}

void Engine::publish_stats() {
  auto now = std::make_shared<const EngineStats>(read_engine_stats(*sched_));
  MutexLock lock(stats_mu_);
  stats_.swap(now);
}

std::shared_ptr<const EngineStats> Engine::stats() const {
  MutexLock lock(stats_mu_);
  return stats_;
}

int32_t Engine::available_blocks() {
  int32_t n = 0;
  inspect([&](const Scheduler& s) { n = s.pool().available(); });
  return n;
}

cache::CacheStats Engine::cache_stats() {
  cache::CacheStats st;
  inspect([&](const Scheduler& s) { st = s.pool().stats(); });
  return st;
}

void Engine::shutdown() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    wake_.notify_one();
  }
  MutexLock join(join_mu_);
  if (thread_.joinable()) thread_.join();
}

void Engine::loop() {
  loop_id_.store(std::this_thread::get_id());
  std::vector<Submission> subs;
  std::vector<RequestId> cancels;
  std::vector<Query> queries;
  for (;;) {
    bool stop = false;
    {
      MutexLock lock(mu_);
      while (!has_work()) {
        // Idle with pins: wake each second to expire them, so that what
        // is published (stats, pins) shows them gone without a request.
        if (sched_->pool().pinned_blocks() == 0) {
          wake_.wait(mu_);
        } else if (!wake_.wait_until(mu_, SteadyClock::now() + std::chrono::seconds(1))) {
          break;
        }
      }
      subs.swap(submissions_);
      cancels.swap(cancels_);
      queries.swap(queries_);
      stop = stopping_;
    }
    drain(subs, cancels);
    if (stop) sched_->cancel_all();
    sched_->expire_pins();  // also when idle: the loop wakes each second while pins are held
    std::vector<std::exception_ptr> failed(queries.size());
    for (size_t i = 0; i < queries.size(); ++i) {
      try {
        (*queries[i].change)(*sched_);
      } catch (...) {
        failed[i] = std::current_exception();
      }
    }
    // What a change did (a policy switched, a tenant flushed) is in the
    // published stats before its caller hears that it is done.
    if (!queries.empty()) publish_stats();
    for (size_t i = 0; i < queries.size(); ++i) {
      if (failed[i]) {
        queries[i].done.set_exception(failed[i]);
      } else {
        queries[i].done.set_value();
      }
    }
    queries.clear();
    if (stop) return;
    if (!sched_->idle()) run_step();
    // The tiers' copies of the last step's blocks hold device references
    // until collected; with nothing left to step, collect them now rather
    // than at a next step that may not come for a long while.
    if (sched_->idle()) sched_->settle_tiers();
    if (sched_->pool().pin_changes() != published_pin_changes_) {
      published_pin_changes_ = sched_->pool().pin_changes();
      publish_pins();
    }
    steps_.store(sched_->steps());
    preemptions_.store(sched_->preemptions());
    const SteadyClock::time_point now = SteadyClock::now();
    if (sched_->idle() || now - last_stats_ >= kStatsInterval) {
      last_stats_ = now;
      publish_stats();
    }
  }
}

bool Engine::has_work() const {
  return stopping_ || !submissions_.empty() || !cancels_.empty() || !queries_.empty() || !sched_->idle();
}

void Engine::drain(std::vector<Submission>& subs, std::vector<RequestId>& cancels) {
  for (Submission& s : subs) {
    try {
      sched_->submit(std::move(s.req), s.who, s.stream, s.arrival);
    } catch (const std::exception& e) {  // checked already; only an id clash could land here
      Completion c;
      c.result.finish = FinishReason::kError;
      c.error = e.what();
      s.stream->finish(std::move(c));
    }
  }
  subs.clear();
  for (RequestId id : cancels) sched_->cancel(id);
  cancels.clear();
}

std::string Engine::failure() const {
  MutexLock lock(failure_mu_);
  return failure_;
}

void Engine::run_step() {
  std::string why;
  try {
    sched_->step();
    return;
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "unknown error";
  }
  // A failed forward pass leaves the batch's K/V unknown: end every request
  // in flight with the error rather than serve wrong tokens. A backend that
  // cannot recover says so, and from then on submit() refuses.
  if (std::string f = sched_->backend().failure(); !f.empty()) {
    {
      MutexLock lock(failure_mu_);
      failure_ = std::move(f);
    }
    failed_.store(true);
    std::fprintf(stderr, "kvgate: engine: the backend failed for good, refusing new requests: %s\n", why.c_str());
  }
  try {
    sched_->fail_all(why);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kvgate: engine: ending the requests after a failed step failed too: %s\n", e.what());
  }
}

}  // namespace kvgate
