// RequestStream: how a submitted request's tokens and result reach its
// consumer (the gateway's SSE writer, a test, a benchmark).
//
// The engine loop is the only producer: push() each token as it is sampled,
// then finish() once. The loop must never wait on a consumer, so a push only
// appends under a short per-stream lock (or calls the consumer's callback,
// which must not block either); a slow reader just lets tokens pile up.
// Consumers pop() (blocking), try_pop() or wait for the Completion; any
// number of threads may read, though one consumer per stream is the intent.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "engine/request.h"
#include "engine/sched/request_timing.h"

namespace kvgate {

// How a request ended: result.finish says why (finish_reason.h).
struct Completion {
  RequestResult result;   // output ids, finish reason and token accounting (request.h)
  std::string error;      // for FinishReason::kError
  RequestTiming timing;   // arrival .. finish, one time per output token
};

class RequestStream {
 public:
  // Called on the engine loop for each token and then once with the
  // completion (token < 0 then). Must return quickly and never block; an
  // exception it throws is caught and counted, never propagated.
  using Callback = std::function<void(TokenId token, const Completion* done)>;

  explicit RequestStream(RequestId id, Callback cb = {}) : id_(id), cb_(std::move(cb)) {}

  RequestId id() const { return id_; }

  // Producer side: the engine loop only.
  void push(TokenId token);
  void finish(Completion c);

  // Consumer side, any thread. pop() blocks until a token arrives (returns
  // it) or the stream has finished and every token was taken (nullopt).
  std::optional<TokenId> pop();
  std::optional<TokenId> try_pop();
  bool finished() const;
  // Blocks until finished; the completion stays readable afterwards.
  const Completion& wait();
  // How many callback calls threw (they were dropped).
  int64_t callback_failures() const { return callback_failures_.load(std::memory_order_relaxed); }

 private:
  void call_back(TokenId token, const Completion* done) noexcept;

  const RequestId id_;
  const Callback cb_;
  std::atomic<int64_t> callback_failures_{0};
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<TokenId> tokens_ ABSL_GUARDED_BY(mu_);
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;  // finish() was called: done_ is set
  bool finished_ ABSL_GUARDED_BY(mu_) = false;   // ... and its callback has run: waiters may go
  // Written once, under mu_, when finishing_ is set; immutable after, so
  // wait() hands out a reference that is read without the lock.
  Completion done_;
};

}  // namespace kvgate
