// One request and its response as async steps on the pool's io thread.
#include "gateway/client/http_exchange.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "base/error.h"

namespace kvgate::client {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

// RFC 9110's token: what a field name may be.
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && std::string_view("!#$%&'*+-.^_`|~").find(ch) == std::string_view::npos) return false;
  }
  return true;
}

bool is_field_value(std::string_view s) { return s.find_first_of(std::string_view("\r\n\0", 3)) == s.npos; }

std::string field_or_empty(const http::fields& f, http::field name) {
  const auto it = f.find(name);
  return it == f.end() ? std::string() : std::string(it->value());
}

}  // namespace

std::string HttpResponseHead::field(std::string_view name) const {
  for (const auto& [n, v] : fields)
    if (boost::beast::iequals(n, name)) return v;
  return {};
}

std::shared_ptr<HttpExchange> HttpExchange::start(ConnectionPool& pool, const HttpCall& call,
                                                  ExchangeHandlers handlers) {
  auto self = std::make_shared<HttpExchange>(pool, call, std::move(handlers));
  net::post(pool.io(), [self] { self->begin(); });
  return self;
}

HttpExchange::HttpExchange(ConnectionPool& pool, const HttpCall& call, ExchangeHandlers handlers)
    : pool_(pool), timeout_(call.timeout), handlers_(std::move(handlers)) {
  const http::verb verb = http::string_to_verb(call.method);
  if (verb == http::verb::unknown) {
    std::string what = "HTTP method ";
    what.append(call.method).append(": unknown");
    throw Error(what);
  }
  request_.method(verb);
  request_.target(call.path);
  request_.version(11);
  request_.set(http::field::host, pool.target().host_header);
  request_.set(http::field::user_agent, "kvgate");
  if (!call.bearer.empty()) {
    std::string auth = "Bearer ";
    auth.append(call.bearer);
    request_.set(http::field::authorization, auth);
  }
  if (!call.body.empty()) request_.set(http::field::content_type, "application/json");
  for (const auto& [name, value] : call.headers) {
    if (!is_token(name) || !is_field_value(value)) {
      std::string what = "request header ";
      what.append(name).append(": not a valid HTTP field");
      throw Error(what);
    }
    request_.set(name, value);
  }
  request_.body() = call.body;
  request_.prepare_payload();
}

void HttpExchange::cancel() {
  net::post(pool_.io(), [self = shared_from_this()] { self->cancel_here(); });
}

void HttpExchange::cancel_here() {
  if (ended_) return;
  // Close, do not destroy: an operation is pending on the stream (there is
  // one whenever a connection is held or being opened). It completes with
  // an error, sees ended_ and lets the connection go.
  if (opening_) beast::get_lowest_layer(opening_->stream).close();
  if (conn_) beast::get_lowest_layer(conn_->stream).close();
  report("cancelled");
}

void HttpExchange::begin() {
  if (ended_) return;  // cancelled before it began
  conn_ = pool_.take_idle();
  reused_ = conn_ != nullptr;
  if (conn_) return write();
  open();
}

void HttpExchange::open() {
  opening_ = pool_.open(timeout_, [self = shared_from_this()](boost::system::error_code ec, const char* step,
                                                             std::unique_ptr<Connection> c) {
    self->on_opened(ec, step, std::move(c));
  });
}

void HttpExchange::on_opened(boost::system::error_code ec, const char* step, std::unique_ptr<Connection> c) {
  opening_ = nullptr;
  if (ended_) return;  // cancelled: `c`, if any, is closed as it goes
  if (ec) return end(std::string(step) + ": " + ec.message());
  conn_ = std::move(c);
  write();
}

void HttpExchange::write() {
  beast::get_lowest_layer(conn_->stream).expires_after(timeout_);
  http::async_write(conn_->stream, request_, [self = shared_from_this()](boost::system::error_code ec, size_t) {
    self->on_write(ec);
  });
}

void HttpExchange::on_write(boost::system::error_code ec) {
  if (ended_) return conn_.reset();
  if (ec) return fail_or_retry(ec, "write");
  parser_.emplace();
  parser_->body_limit(boost::none);  // a stream is as long as its max_tokens
  beast::get_lowest_layer(conn_->stream).expires_after(timeout_);
  http::async_read_header(conn_->stream, conn_->buffer, *parser_,
                          [self = shared_from_this()](boost::system::error_code e, size_t) { self->on_header(e); });
}

void HttpExchange::on_header(boost::system::error_code ec) {
  if (ended_) return conn_.reset();
  if (ec) return fail_or_retry(ec, "read");
  got_header_ = true;
  ++conn_->requests;
  if (handlers_.on_header) {
    const auto& h = parser_->get();
    HttpResponseHead head;
    head.content_type = field_or_empty(h, http::field::content_type);
    head.retry_after = field_or_empty(h, http::field::retry_after);
    for (const auto& f : h) head.fields.emplace_back(std::string(f.name_string()), std::string(f.value()));
    handlers_.on_header(static_cast<int>(h.result_int()), head);
  }
  read_some();
}

void HttpExchange::read_some() {
  if (parser_->is_done()) return end("");
  beast::get_lowest_layer(conn_->stream).expires_after(timeout_);
  http::async_read_some(conn_->stream, conn_->buffer, *parser_,
                        [self = shared_from_this()](boost::system::error_code e, size_t) { self->on_read(e); });
}

void HttpExchange::on_read(boost::system::error_code ec) {
  if (ended_) return conn_.reset();
  // Hand over what arrived and drop it: the string body's reader appends at
  // the body's current size, so clearing it keeps a long stream's memory flat.
  std::string& body = parser_->get().body();
  if (!body.empty()) {
    if (handlers_.on_body) handlers_.on_body(body);
    body.clear();
  }
  if (ec) return end("read: " + ec.message());
  read_some();
}

void HttpExchange::fail_or_retry(boost::system::error_code ec, const char* step) {
  if (reused_ && !retried_ && !got_header_) {
    // The server closed this idle connection (its idle timeout, a restart);
    // the request never reached it. One more try, on a new connection.
    retried_ = true;
    reused_ = false;
    conn_.reset();
    return open();
  }
  end(std::string(step) + ": " + ec.message());
}

void HttpExchange::end(const std::string& error) {
  if (error.empty() && conn_ && parser_ && parser_->keep_alive()) {
    beast::get_lowest_layer(conn_->stream).expires_never();  // idle: no deadline until its next request
    pool_.put_back(std::move(conn_));
  }
  conn_.reset();  // after a failure, or a response that closes: closed as it goes
  report(error);
}

void HttpExchange::report(const std::string& error) {
  ended_ = true;
  // Released before the call: handlers that hold this exchange make no cycle.
  ExchangeHandlers h = std::move(handlers_);
  handlers_ = {};
  if (h.on_end) h.on_end(error);
}

}  // namespace kvgate::client
