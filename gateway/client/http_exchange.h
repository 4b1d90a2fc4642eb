// HttpExchange: one HTTP/1.1 request over a ConnectionPool and its
// response, the body handed over in the pieces it arrives in, so a
// streamed completion's chunks are seen (and timed, and forwarded) as they
// come.
//
// A request first tries an idle connection; if that connection turns out
// to have been closed by the server meanwhile (the write fails, or the
// connection ends before a response header), it is sent once more on a new
// connection, as HTTP clients do for idempotent retries of a request the
// server never saw. Every network step has `timeout` to make progress.
//
// Threads:
//   - start() may be called from any thread: it posts the exchange's begin
//     onto the pool's io_context.
//   - cancel() may be called from any thread, any number of times, during
//     or after the exchange: it posts onto the pool's io_context.
//   - every handler runs on the pool's io thread, never inline in start()
//     or cancel(); a handler may call cancel() (it takes effect after the
//     handler returns, unless the response has ended by then).
//   - all pool state (the idle list) is touched on the io thread only.
//
// Lifetime: pending operations keep the exchange alive until it ends; the
// pointer start() returns is only for cancel() and may be dropped at once.
// The handlers are released once on_end has run, so they may hold that
// pointer without a cycle.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
  // Extra request headers (e.g. {"Accept", "text/event-stream"}), set after
  // Host, User-Agent (kvgate), Authorization and Content-Type, so one of
  // the same name replaces it. Content-Length is the exchange's own.
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::steady_clock::duration timeout = std::chrono::seconds(600);
};

// What a caller needs of the response header besides the status.
struct HttpResponseHead {
  std::string content_type;  // Content-Type, empty when absent
  std::string retry_after;   // Retry-After as sent, empty when absent
  std::vector<std::pair<std::string, std::string>> fields;  // every header, as sent
  // The value of the first header named `name` (case-insensitive), empty when absent.
  std::string field(std::string_view name) const;
};

struct ExchangeHandlers {
  // The response header read.
  std::function<void(int status, const HttpResponseHead& head)> on_header;
  // Body bytes, as they arrive (chunked framing removed).
  std::function<void(std::string_view bytes)> on_body;
  // The end, exactly once: an empty `error` when the whole response was
  // read, "cancelled" after cancel(), else what failed ("connect:
  // Connection refused", "read: timeout", ...).
  std::function<void(const std::string& error)> on_end;
};

class HttpExchange : public std::enable_shared_from_this<HttpExchange> {
 public:
  // Any thread. Throws kvgate::Error (and sends nothing) for an extra
  // header whose name is not an HTTP token or whose value holds CR, LF or
  // NUL, or an unknown method.
  static std::shared_ptr<HttpExchange> start(ConnectionPool& pool, const HttpCall& call, ExchangeHandlers handlers);

  // Any thread. Unless the exchange has already ended: its connection is
  // closed (never returned to the pool, so the server sees the client go
  // away) and on_end runs once with "cancelled". After the end: nothing.
  void cancel();

  // Use start().
  HttpExchange(ConnectionPool& pool, const HttpCall& call, ExchangeHandlers handlers);

 private:
  void begin();
  void open();
  void on_opened(boost::system::error_code ec, const char* step, std::unique_ptr<Connection> c);
  void write();
  void on_write(boost::system::error_code ec);
  void on_header(boost::system::error_code ec);
  void read_some();
  void on_read(boost::system::error_code ec);
  // A failure on a reused connection before any response: try a fresh one.
  void fail_or_retry(boost::system::error_code ec, const char* step);
  void cancel_here();
  // The end after the last step: the connection back to the pool (a whole
  // response, kept alive) or gone, then report().
  void end(const std::string& error);
  // ended_, the handlers released, on_end.
  void report(const std::string& error);

  ConnectionPool& pool_;
  std::chrono::steady_clock::duration timeout_;
  boost::beast::http::request<boost::beast::http::string_body> request_;
  ExchangeHandlers handlers_;
  std::unique_ptr<Connection> conn_;
  Connection* opening_ = nullptr;  // being opened by the pool, until on_opened
  std::optional<boost::beast::http::response_parser<boost::beast::http::string_body>> parser_;
  bool reused_ = false;
  bool retried_ = false;
  bool got_header_ = false;
  bool ended_ = false;  // on_end has run (or is running)
};

}  // namespace kvgate::client
