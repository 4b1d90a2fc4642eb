// TlsSession: HTTP/1.1 over TLS (asio's ssl::stream over the TCP socket).
// The handshake starts from the bytes the detector already read, under
// the read timeout; a failed handshake (garbage after a 0x16 byte, a
// client offering only TLS 1.1, no shared cipher) closes the connection
// and is counted. Closing sends close_notify and waits for the client's
// (async_shutdown, bounded by the linger timer), after draining a request
// that was cut short.
//
// Thread ownership: as HttpSession: everything on the connection's strand.
#pragma once

#include <boost/asio/ssl/stream.hpp>

#include "gateway/server/http_session.h"

namespace kvgate::server {

class TlsSession : public HttpSession<TlsSession> {
 public:
  static constexpr bool kSecure = true;

  TlsSession(std::shared_ptr<ServerCore> core, uint64_t id, tcp::socket socket, beast::flat_buffer buffer,
             SessionMode mode, std::string peer)
      : HttpSession(core, id, socket.get_executor(), std::move(buffer), mode, std::move(peer)),
        stream_(std::move(socket), *core->tls()) {}

  void start() override {
    post_to_strand(self(), [](TlsSession& s) { s.do_handshake(); });
  }

  net::ssl::stream<tcp::socket>& stream() { return stream_; }
  tcp::socket& socket() { return stream_.next_layer(); }

  // Closing: close_notify, then wait for the client's (or its EOF). A
  // request cut short is drained first, since OpenSSL fails a shutdown
  // that meets application data: read and discard until the client has
  // been quiet for kQuiet, then shut down. A shutdown may not run beside a
  // read, so an outstanding peek is cancelled first.
  static constexpr std::chrono::milliseconds kQuiet{100};

  void begin_close() {
    if (!drain_on_close_) return shut_down();
    arm(Timer::kQuiet, kQuiet);
    if (!peek_pending_) do_peek();
  }

  void on_closing_read(beast::error_code ec) {
    if (cancelling_peek_) return do_shutdown();
    if (ec == net::error::eof) return shut_down();  // the client's close_notify came first
    if (ec) return close_now();
    buffer_.consume(buffer_.size());
    if (linger_deadline_ - std::chrono::steady_clock::now() > kQuiet) arm(Timer::kQuiet, kQuiet);
    else arm_linger();
    do_peek();
  }

  void on_quiet() { shut_down(); }

 private:
  void do_handshake() {
    phase_ = Phase::kHandshake;
    arm(Timer::kHandshake, options().read_timeout);
    stream_.async_handshake(net::ssl::stream_base::server, buffer_.data(),
                            [self = self()](beast::error_code ec, size_t used) { self->on_handshake(ec, used); });
  }

  void on_handshake(beast::error_code ec, size_t used) {
    if (phase_ != Phase::kHandshake) return;
    if (ec) {
      core_->counters().tls_handshake_failures++;
      return close_now();
    }
    disarm();
    buffer_.consume(used);
    begin_requests();
  }

  void shut_down() {
    arm_linger();
    if (!peek_pending_) return do_shutdown();
    cancelling_peek_ = true;
    beast::error_code ignored;
    socket().cancel(ignored);
  }

  void do_shutdown() {
    cancelling_peek_ = false;
    stream_.async_shutdown([self = self()](beast::error_code) { self->close_now(); });
  }

  net::ssl::stream<tcp::socket> stream_;
  bool cancelling_peek_ = false;
};

}  // namespace kvgate::server
