// HttpExchange: one HTTP/1.1 request over the pool and its response, the
// body handed over in the pieces it arrives in, so a streamed completion's
// chunks are timed as they come.
//
// A request first tries an idle connection; if that connection turns out
// to have been closed by the server meanwhile (the write fails, or the
// connection ends before a response header), it is sent once more on a new
// connection, as HTTP clients do for idempotent retries of a request the
// server never saw. Every network step has `timeout` to make progress.
//
// Threads: the run's one io_context thread; the callbacks run there.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "gateway/client/connection_pool.h"

namespace kvgate::client {

struct HttpCall {
  std::string method = "GET";
  std::string path = "/";
  std::string bearer;  // Authorization: Bearer, when not empty
  std::string body;    // sent as application/json when not empty
  std::chrono::steady_clock::duration timeout = std::chrono::seconds(600);
};

struct ExchangeHandlers {
  std::function<void(int status)> on_header;                 // the response header read
  std::function<void(std::string_view bytes)> on_body;       // body bytes, as they arrive
  // The end: an empty `error` when the whole response was read, else what
  // failed ("connect: Connection refused", "read: timeout", ...).
  std::function<void(const std::string& error)> on_end;
};

class HttpExchange : public std::enable_shared_from_this<HttpExchange> {
 public:
  static void start(ConnectionPool& pool, const HttpCall& call, ExchangeHandlers handlers);

  HttpExchange(ConnectionPool& pool, const HttpCall& call, ExchangeHandlers handlers);

 private:
  void begin();
  void on_opened(boost::system::error_code ec, const char* step, std::unique_ptr<Connection> c);
  void write();
  void on_write(boost::system::error_code ec);
  void on_header(boost::system::error_code ec);
  void read_some();
  void on_read(boost::system::error_code ec);
  // A failure on a reused connection before any response: try a fresh one.
  void fail_or_retry(boost::system::error_code ec, const char* step);
  void end(const std::string& error);

  ConnectionPool& pool_;
  std::chrono::steady_clock::duration timeout_;
  boost::beast::http::request<boost::beast::http::string_body> request_;
  ExchangeHandlers handlers_;
  std::unique_ptr<Connection> conn_;
  std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>> parser_;
  bool reused_ = false;
  bool retried_ = false;
  bool got_header_ = false;
};

}  // namespace kvgate::client
