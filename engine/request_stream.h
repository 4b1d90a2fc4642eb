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

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "engine/request.h"
#include "engine/request_timing.h"

namespace kvgate {

// Why a request ended, as a client sees it.
enum class Outcome { kStop, kLength, kCancelled, kError };
const char* outcome_name(Outcome o);  // "stop", "length", "cancelled", "error"

struct Completion {
  Outcome outcome = Outcome::kStop;
  std::string error;      // for kError
  RequestResult result;   // output ids and token accounting (request.h)
  RequestTiming timing;   // arrival .. finish, one time per output token
};

class RequestStream {
 public:
  // Called on the engine loop for each token and then once with the
  // completion (token < 0 then). Must return quickly and never block.
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

 private:
  const RequestId id_;
  const Callback cb_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TokenId> tokens_;  // GUARDED_BY(mu_)
  bool finished_ = false;       // GUARDED_BY(mu_)
  Completion done_;             // GUARDED_BY(mu_); immutable once finished_
};

}  // namespace kvgate
