// First-byte protocol detection on the TLS port.
#include "gateway/server/detect_session.h"

#include "gateway/server/plain_session.h"
#include "gateway/server/tls_session.h"

namespace kvgate::server {

DetectSession::DetectSession(std::shared_ptr<ServerCore> core, uint64_t id, tcp::socket socket, SessionMode mode,
                             std::string peer)
    : SessionBase(std::move(core), id, socket.get_executor()),
      socket_(std::move(socket)),
      timer_(socket_.get_executor()),
      mode_(mode),
      peer_(std::move(peer)) {}

void DetectSession::start() {
  post_to_strand(self(), [](DetectSession& s) { s.do_read(); });
}

void DetectSession::server_closing() {
  post_to_strand(self(), [](DetectSession& s) { s.close(); });
}

void DetectSession::do_read() {
  if (done_) return;
  timer_.expires_after(core_->options().read_timeout);
  timer_.async_wait([self = self()](boost::system::error_code ec) {
    if (ec || self->done_) return;
    self->core_->counters().read_timeouts++;
    self->close();
  });
  socket_.async_read_some(buffer_.prepare(512),
                          [self = self()](boost::system::error_code ec, size_t n) { self->on_read(ec, n); });
}

void DetectSession::on_read(boost::system::error_code ec, size_t n) {
  if (done_) return;
  timer_.cancel();
  buffer_.commit(n);
  if (ec || buffer_.size() == 0) return close();
  const auto first = static_cast<unsigned char>(*static_cast<const char*>(buffer_.data().data()));

  std::shared_ptr<SessionBase> next;
  if (first == 0x16) {
    next = std::make_shared<TlsSession>(core_, id_, std::move(socket_), std::move(buffer_), mode_, peer_);
  } else if (first >= 'A' && first <= 'Z') {
    next = std::make_shared<PlainSession>(core_, id_, std::move(socket_), std::move(buffer_),
                                          SessionMode::kHttpsRequired, peer_);
  } else {
    core_->counters().not_tls++;
    return close();
  }
  done_ = true;
  core_->replace(id_, next);
  next->start();
}

void DetectSession::close() {
  if (done_) return;
  done_ = true;
  timer_.cancel();
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  core_->release(id_);
}

}  // namespace kvgate::server
