// ReplyRecorder: the ReplyTarget of the suites that drive a handler without
// a socket (reply_target.h). It keeps every event a Reply delivers, in
// order, with the exchange it answers, and lets the test's thread wait for
// the response to end when the handler answers from another thread (the
// engine loop, a BlockingPool thread). Waits are bounded by kWait only so a
// failure cannot hang: nothing is timed.
//
// Thread ownership: deliver() from any thread; the rest on the test's.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "gateway/server/reply_target.h"

namespace kvgate::server::testing {

inline constexpr std::chrono::seconds kWait{20};  // a failure guard, never an expectation

class ReplyRecorder : public ReplyTarget {
 public:
  void deliver(uint64_t exchange, ReplyEvent event) override {
    {
      MutexLock lock(mu_);
      exchanges_.push_back(exchange);
      events_.push_back(std::move(event));
    }
    cv_.notify_all();
  }

  // What came so far.
  std::vector<ReplyEvent> events() {
    MutexLock lock(mu_);
    return events_;
  }
  std::vector<uint64_t> exchanges() {
    MutexLock lock(mu_);
    return exchanges_;
  }

  // Waits until the response has ended (kSend, kFinish or kAbort) or, with
  // at_least > 0, until that many events came; then what came.
  std::vector<ReplyEvent> wait(size_t at_least = 0) {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    MutexLock lock(mu_);
    while (!ended() && (at_least == 0 || events_.size() < at_least))
      if (!cv_.wait_until(mu_, deadline)) break;
    return events_;
  }

  // The whole body, once the response has ended: a kSend's, or a stream's
  // writes joined.
  std::string body() {
    std::string b;
    for (const ReplyEvent& e : wait())
      if (e.kind == ReplyEvent::Kind::kSend || e.kind == ReplyEvent::Kind::kWrite) b += e.body;
    return b;
  }

 private:
  bool ended() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (events_.empty()) return false;
    const ReplyEvent::Kind k = events_.back().kind;
    return k == ReplyEvent::Kind::kSend || k == ReplyEvent::Kind::kFinish || k == ReplyEvent::Kind::kAbort;
  }

  Mutex mu_;
  CondVar cv_;
  std::vector<ReplyEvent> events_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> exchanges_ ABSL_GUARDED_BY(mu_);
};

// The value of a kSend or kStart event's header (case-insensitive), or "".
inline std::string header(const ReplyEvent& e, std::string_view name) {
  const auto v = find_header(e.headers, name);
  return v ? std::string(*v) : std::string();
}

}  // namespace kvgate::server::testing
