// PlainSession: HTTP/1.1 over a bare TCP socket. Serves the plain-HTTP
// listener (only when configured) and answers the two refusals that need
// no TLS: plain HTTP sent to the TLS port (400) and, on the plain port, a
// connection over the limit (503).
//
// Thread ownership: as HttpSession: everything on the connection's strand.
#pragma once

#include "gateway/server/http_session.h"

namespace kvgate::server {

class PlainSession : public HttpSession<PlainSession> {
 public:
  static constexpr bool kSecure = false;

  PlainSession(std::shared_ptr<ServerCore> core, uint64_t id, tcp::socket socket, beast::flat_buffer buffer,
               SessionMode mode, std::string peer)
      : HttpSession(std::move(core), id, socket.get_executor(), std::move(buffer), mode, std::move(peer)),
        socket_(std::move(socket)) {}

  void start() override {
    post_to_strand(self(), [](PlainSession& s) { s.begin_requests(); });
  }

  tcp::socket& stream() { return socket_; }
  tcp::socket& socket() { return socket_; }

  // Our FIN tells the client the response is complete; then read until
  // its FIN (or the linger timer).
  void begin_close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    if (!peek_pending_) do_peek();
  }
  void on_closing_read(beast::error_code ec) { drain(ec); }
  void on_quiet() {}  // never armed: the FIN already told the client

 private:
  tcp::socket socket_;
};

}  // namespace kvgate::server
