// ConnectionPool: the run's keep-alive TLS connections to the server.
//
// A request takes an idle connection if there is one, else opens a new one
// (TCP connect, TLS handshake with SNI and the host check); after a
// complete response the server means to keep open, it goes back idle.
// Like an HTTP client library's pool (vLLM's benchmark uses aiohttp's), so
// the handshake is paid once per connection, not once per request, and
// the pool grows to the run's peak concurrency.
//
// Threads: everything runs on the run's one io_context thread; nothing
// here is locked.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "gateway/client/https_target.h"

namespace kvgate::client {

struct Connection {
  Connection(boost::asio::io_context& io, boost::asio::ssl::context& tls) : stream(io, tls) {}
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream;
  boost::beast::flat_buffer buffer;  // bytes read past the last response
  int64_t requests = 0;              // served on this connection so far
};

class ConnectionPool {
 public:
  using Opened = std::function<void(boost::system::error_code, const char* step, std::unique_ptr<Connection>)>;

  // Resolves the target's host once, here (blocking): a run's requests then
  // never wait on DNS. Throws kvgate::Error when it does not resolve.
  ConnectionPool(boost::asio::io_context& io, std::shared_ptr<boost::asio::ssl::context> tls, HttpsTarget target,
                 bool verify_host);

  // An idle connection, or null.
  std::unique_ptr<Connection> take_idle();
  // Opens a new connection; `done` gets it, or the error and the step that
  // failed ("connect", "TLS handshake").
  void open(std::chrono::steady_clock::duration timeout, Opened done);
  void put_back(std::unique_ptr<Connection> c);

  const HttpsTarget& target() const { return target_; }
  int64_t opened() const { return opened_; }
  size_t idle() const { return idle_.size(); }

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  HttpsTarget target_;
  bool verify_host_;
  boost::asio::ip::tcp::resolver::results_type endpoints_;
  std::vector<std::unique_ptr<Connection>> idle_;
  int64_t opened_ = 0;
};

}  // namespace kvgate::client
