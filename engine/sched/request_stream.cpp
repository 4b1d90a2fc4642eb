// Invariant: once finishing_ is set, done_ and the set of tokens ever pushed
// no longer change; pop() drains tokens_ before reporting the end.
// Thread ownership: push()/finish() on the engine loop; the rest anywhere.
#include "engine/sched/request_stream.h"

namespace kvgate {

void RequestStream::push(TokenId token) {
  call_back(token, nullptr);
  {
    MutexLock lock(mu_);
    tokens_.push_back(token);
  }
  cv_.notify_all();
}

void RequestStream::finish(Completion c) {
  {
    MutexLock lock(mu_);
    if (finishing_) return;
    finishing_ = true;
    done_ = std::move(c);  // immutable from here on
  }
  // The completion's callback runs before any waiter wakes: what it does
  // (the engine's in-flight count, a server's last frame) has happened
  // when wait() returns.
  call_back(-1, &done_);
  {
    MutexLock lock(mu_);
    finished_ = true;
  }
  cv_.notify_all();
}

// A consumer's callback that throws is its own bug: it must not end the
// engine loop, nor keep the stream from finishing. It loses that callback
// (the token is still queued for pop()); the loop goes on.
void RequestStream::call_back(TokenId token, const Completion* done) noexcept {
  if (!cb_) return;
  try {
    cb_(token, done);
  } catch (...) {
    callback_failures_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::optional<TokenId> RequestStream::pop() {
  MutexLock lock(mu_);
  while (tokens_.empty() && !finished_) cv_.wait(mu_);
  if (tokens_.empty()) return std::nullopt;
  const TokenId t = tokens_.front();
  tokens_.pop_front();
  return t;
}

std::optional<TokenId> RequestStream::try_pop() {
  MutexLock lock(mu_);
  if (tokens_.empty()) return std::nullopt;
  const TokenId t = tokens_.front();
  tokens_.pop_front();
  return t;
}

bool RequestStream::finished() const {
  MutexLock lock(mu_);
  return finished_;
}

const Completion& RequestStream::wait() {
  MutexLock lock(mu_);
  while (!finished_) cv_.wait(mu_);
  return done_;
}

}  // namespace kvgate
