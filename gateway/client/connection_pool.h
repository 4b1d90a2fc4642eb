// ConnectionPool: keep-alive TLS connections to one server.
//
// An exchange takes an idle connection if there is one, else opens a new
// one (TCP connect, TLS handshake with SNI and the host check); after a
// complete response the server means to keep open, it goes back idle.
// Like an HTTP client library's pool (vLLM's benchmark uses aiohttp's), so
// the handshake is paid once per connection, not once per request, and
// the pool grows to the peak number of exchanges in flight.
//
// Threads: the pool belongs to one io_context, run by exactly one thread
// (the pool's io thread). take_idle(), open(), put_back() and idle() are
// for that thread only, and nothing here is locked: other threads reach
// the pool through HttpExchange::start() and cancel(), which post onto
// it. The constructor, target(), io() and opened() may be called from any
// thread.
//
// Lifetime: the pool outlives every exchange on it that can still run,
// so destroy it only once its io_context runs no more.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
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

  // Resolves the target's host once, here (blocking): requests then never
  // wait on DNS. Throws kvgate::Error when it does not resolve.
  ConnectionPool(boost::asio::io_context& io, std::shared_ptr<boost::asio::ssl::context> tls, HttpsTarget target,
                 bool verify_host);

  // An idle connection, or null. The io thread only.
  std::unique_ptr<Connection> take_idle();
  // Opens a new connection; `done` gets it, or the error and the step that
  // failed ("connect", "TLS handshake"). Returns the connection being
  // opened, valid until `done` runs, so a caller can close() its lowest
  // layer to give up (`done` then gets the error). The io thread only.
  Connection* open(std::chrono::steady_clock::duration timeout, Opened done);
  // A connection after a complete response, for the next request. The io
  // thread only.
  void put_back(std::unique_ptr<Connection> c);

  boost::asio::io_context& io() const { return io_; }
  const HttpsTarget& target() const { return target_; }
  // Connections opened so far (each attempt counts, failed ones too).
  int64_t opened() const { return opened_.load(std::memory_order_relaxed); }
  // Idle connections now. The io thread only.
  size_t idle() const { return idle_.size(); }

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  HttpsTarget target_;
  bool verify_host_;
  boost::asio::ip::tcp::resolver::results_type endpoints_;
  std::vector<std::unique_ptr<Connection>> idle_;
  std::atomic<int64_t> opened_{0};
};

}  // namespace kvgate::client
