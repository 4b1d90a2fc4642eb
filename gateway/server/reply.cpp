// Reply and ReplyState: the order of a response's steps and the once-only
// close callback (see reply_state.h for the states and invariants).
#include "gateway/server/reply.h"

#include "gateway/server/error_body.h"
#include "gateway/server/reply_state.h"
#include "gateway/server/wire_format.h"

namespace kvgate::server {

namespace {

ReplyEvent internal_error(std::string_view message) {
  ReplyEvent e;
  e.kind = ReplyEvent::Kind::kSend;
  e.status = 500;
  e.headers = {{"Content-Type", "application/json"}};
  e.body = error_body(message, "server_error", "internal_error");
  return e;
}

// A user callback must not take an I/O thread down with it.
void run_quietly(const std::function<void()>& fn) {
  if (!fn) return;
  try {
    fn();
  } catch (...) {
  }
}

}  // namespace

ReplyState::~ReplyState() {
  MutexLock lock(mu_);
  if (phase_ == Phase::kNone) {
    deliver_locked(internal_error("the server dropped this request without a response"));
  } else if (phase_ == Phase::kStreaming) {
    ReplyEvent abort;
    abort.kind = ReplyEvent::Kind::kAbort;
    deliver_locked(std::move(abort));
  }
}

void ReplyState::deliver_locked(ReplyEvent event) {
  if (std::shared_ptr<ReplyTarget> target = target_.lock()) target->deliver(exchange_, std::move(event));
}

bool ReplyState::send(int status, HttpHeaders headers, std::string body) {
  MutexLock lock(mu_);
  if (phase_ != Phase::kNone) return false;
  phase_ = Phase::kDone;
  if (!valid_final_status(status) || !valid_headers(headers)) {
    deliver_locked(internal_error("the server built a malformed response"));
    return false;
  }
  ReplyEvent e;
  e.kind = ReplyEvent::Kind::kSend;
  e.status = status;
  e.headers = std::move(headers);
  e.body = std::move(body);
  deliver_locked(std::move(e));
  return true;
}

bool ReplyState::start_stream(int status, HttpHeaders headers) {
  MutexLock lock(mu_);
  if (phase_ != Phase::kNone) return false;
  if (!valid_final_status(status) || !status_has_body(status) || !valid_headers(headers)) {
    phase_ = Phase::kDone;
    deliver_locked(internal_error("the server built a malformed response"));
    return false;
  }
  phase_ = Phase::kStreaming;
  ReplyEvent e;
  e.kind = ReplyEvent::Kind::kStart;
  e.status = status;
  e.headers = std::move(headers);
  deliver_locked(std::move(e));
  return true;
}

bool ReplyState::write(std::string chunk) {
  MutexLock lock(mu_);
  if (phase_ != Phase::kStreaming) return false;
  if (chunk.empty()) return true;  // an empty chunk would end a chunked body
  ReplyEvent e;
  e.kind = ReplyEvent::Kind::kWrite;
  e.body = std::move(chunk);
  deliver_locked(std::move(e));
  return true;
}

bool ReplyState::finish() {
  MutexLock lock(mu_);
  if (phase_ != Phase::kStreaming) return false;
  phase_ = Phase::kDone;
  ReplyEvent e;
  e.kind = ReplyEvent::Kind::kFinish;
  deliver_locked(std::move(e));
  return true;
}

void ReplyState::on_close(std::function<void()> fn) {
  {
    MutexLock lock(mu_);
    if (written_) return;  // the response is complete: it can no longer be cut off
    if (!gone_) {
      on_close_ = std::move(fn);
      return;
    }
  }
  run_quietly(fn);  // the client left already: run it now, without the lock
}

bool ReplyState::responded() const {
  MutexLock lock(mu_);
  return phase_ != Phase::kNone;
}

bool ReplyState::client_gone() const {
  MutexLock lock(mu_);
  return gone_;
}

void ReplyState::connection_closed() {
  std::function<void()> fn;
  {
    MutexLock lock(mu_);
    if (written_ || gone_) return;
    gone_ = true;
    fn = std::move(on_close_);
    on_close_ = nullptr;
  }
  run_quietly(fn);
}

void ReplyState::response_written() {
  std::function<void()> drop;  // released outside the lock: it may own anything
  MutexLock lock(mu_);
  written_ = true;
  drop = std::move(on_close_);
  on_close_ = nullptr;
}

Reply::Reply(std::weak_ptr<ReplyTarget> target, uint64_t exchange)
    : state_(std::make_shared<ReplyState>(std::move(target), exchange)) {}

bool Reply::send(int status, HttpHeaders headers, std::string body) {
  return state_ && state_->send(status, std::move(headers), std::move(body));
}
bool Reply::start_stream(int status, HttpHeaders headers) {
  return state_ && state_->start_stream(status, std::move(headers));
}
bool Reply::write(std::string chunk) { return state_ && state_->write(std::move(chunk)); }
bool Reply::finish() { return state_ && state_->finish(); }
void Reply::on_close(std::function<void()> fn) {
  if (state_) state_->on_close(std::move(fn));
}
bool Reply::responded() const { return state_ && state_->responded(); }
bool Reply::client_gone() const { return state_ && state_->client_gone(); }

}  // namespace kvgate::server
