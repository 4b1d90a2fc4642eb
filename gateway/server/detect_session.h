// DetectSession: the first moments of a connection to the TLS port. It
// reads the first byte (under the read timeout) and hands the connection,
// with the bytes read, to the session that speaks it, as Beast's
// detect_ssl does:
//
//   0x16 (a TLS handshake record)   -> TlsSession
//   'A'..'Z' (an HTTP method)       -> PlainSession answering 400
//                                      "this port speaks HTTPS"
//   anything else, or nothing       -> closed (counted as not_tls)
//
// The connection keeps its registry slot across the hand-over.
//
// Thread ownership: everything on the connection's strand.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <string>

#include "gateway/server/session_base.h"

namespace kvgate::server {

class DetectSession : public SessionBase {
 public:
  DetectSession(std::shared_ptr<ServerCore> core, uint64_t id, boost::asio::ip::tcp::socket socket, SessionMode mode,
                std::string peer);

  void start() override;
  void deliver(uint64_t, ReplyEvent) override {}  // no request yet, so no Reply
  void server_stopping() override { server_closing(); }
  void server_closing() override;

 private:
  std::shared_ptr<DetectSession> self() { return std::static_pointer_cast<DetectSession>(shared_from_this()); }
  void do_read();
  void on_read(boost::system::error_code ec, size_t n);
  void close();

  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer timer_;
  const SessionMode mode_;
  std::string peer_;
  bool done_ = false;  // closed, or handed over
};

}  // namespace kvgate::server
