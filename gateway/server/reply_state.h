// ReplyState: the one response that all copies of a Reply share, and the
// order its steps may come in:
//
//   kNone --send--> kDone
//   kNone --start_stream--> kStreaming --write*--> kStreaming --finish--> kDone
//
// Invariants: every event reaches the target in the order its call took
// mu_ (the post happens under it), so two threads writing chunks cannot
// reorder a stream; at most one of {a response, the 500 of the destructor}
// is ever delivered; on_close_ runs at most once, and never after
// response_written().
//
// Thread ownership: the Reply methods are called from any thread; the
// session calls connection_closed() / response_written() on its strand.
// Everything mutable is guarded by mu_. User callbacks never run under it.
#pragma once

#include <absl/base/thread_annotations.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "gateway/server/http_headers.h"
#include "gateway/server/reply_target.h"

namespace kvgate::server {

class ReplyState {
 public:
  ReplyState(std::weak_ptr<ReplyTarget> target, uint64_t exchange)
      : target_(std::move(target)), exchange_(exchange) {}
  ~ReplyState();
  ReplyState(const ReplyState&) = delete;
  ReplyState& operator=(const ReplyState&) = delete;

  bool send(int status, HttpHeaders headers, std::string body);
  bool start_stream(int status, HttpHeaders headers);
  bool write(std::string chunk);
  bool finish();
  void on_close(std::function<void()> fn);
  bool responded() const;
  bool client_gone() const;

  // Session side: the client is gone before the response was written out
  // (runs on_close's callback, here, once).
  void connection_closed();
  // Session side: the last byte of the response is on the wire.
  void response_written();

 private:
  enum class Phase { kNone, kStreaming, kDone };

  void deliver_locked(ReplyEvent event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::weak_ptr<ReplyTarget> target_;
  const uint64_t exchange_;

  mutable Mutex mu_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kNone;
  bool gone_ ABSL_GUARDED_BY(mu_) = false;     // client left first
  bool written_ ABSL_GUARDED_BY(mu_) = false;  // response left first
  std::function<void()> on_close_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kvgate::server
