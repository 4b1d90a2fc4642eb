// Listener: one bound port and its accept loop. Each accepted socket gets
// its own strand and a slot in the registry (or, past the limits, a 503 or
// an immediate close), then the session for its port: DetectSession on the
// TLS port, PlainSession on the plain one. An accept error (out of file
// descriptors) retries after a pause instead of spinning.
//
// Thread ownership: the acceptor lives on its own strand; start() and
// stop() may be called from any thread and post there.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>

#include "gateway/server/server_core.h"

namespace kvgate::server {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Binds and listens at once (so the port is known and a busy port is an
  // error before start); throws kvgate::Error naming the address.
  Listener(boost::asio::io_context& ioc, std::shared_ptr<ServerCore> core, const boost::asio::ip::tcp::endpoint& at,
           bool tls);

  uint16_t port() const { return port_; }
  void start();
  void stop();

 private:
  void do_accept();
  void on_accept(boost::system::error_code ec, boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& ioc_;
  const std::shared_ptr<ServerCore> core_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  const bool tls_;
  uint16_t port_ = 0;
};

}  // namespace kvgate::server
