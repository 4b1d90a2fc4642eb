// One request and its response as async steps on the run's I/O thread.
#include "gateway/client/http_exchange.h"

#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace kvgate::client {
namespace beast = boost::beast;
namespace http = beast::http;

void HttpExchange::start(ConnectionPool& pool, const HttpCall& call, ExchangeHandlers handlers) {
  std::make_shared<HttpExchange>(pool, call, std::move(handlers))->begin();
}

HttpExchange::HttpExchange(ConnectionPool& pool, const HttpCall& call, ExchangeHandlers handlers)
    : pool_(pool), timeout_(call.timeout), handlers_(std::move(handlers)) {
  request_.method(http::string_to_verb(call.method));
  request_.target(call.path);
  request_.version(11);
  request_.set(http::field::host, pool.target().host_header);
  request_.set(http::field::user_agent, "kvgate-bench-serve");
  if (!call.bearer.empty()) request_.set(http::field::authorization, "Bearer " + call.bearer);
  if (!call.body.empty()) request_.set(http::field::content_type, "application/json");
  request_.body() = call.body;
  request_.prepare_payload();
}

void HttpExchange::begin() {
  conn_ = pool_.take_idle();
  reused_ = conn_ != nullptr;
  if (conn_) return write();
  pool_.open(timeout_, [self = shared_from_this()](boost::system::error_code ec, const char* step,
                                                     std::unique_ptr<Connection> c) {
    self->on_opened(ec, step, std::move(c));
  });
}

void HttpExchange::on_opened(boost::system::error_code ec, const char* step, std::unique_ptr<Connection> c) {
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
  if (ec) return fail_or_retry(ec, "write");
  parser_.emplace();
  parser_->body_limit(boost::none);  // a stream is as long as its max_tokens
  beast::get_lowest_layer(conn_->stream).expires_after(timeout_);
  http::async_read_header(conn_->stream, conn_->buffer, *parser_,
                          [self = shared_from_this()](boost::system::error_code e, size_t) { self->on_header(e); });
}

void HttpExchange::on_header(boost::system::error_code ec) {
  if (ec) return fail_or_retry(ec, "read");
  got_header_ = true;
  ++conn_->requests;
  if (handlers_.on_header) handlers_.on_header(static_cast<int>(parser_->get().result_int()));
  read_some();
}

void HttpExchange::read_some() {
  if (parser_->is_done()) return end("");
  beast::get_lowest_layer(conn_->stream).expires_after(timeout_);
  http::async_read_some(conn_->stream, conn_->buffer, *parser_,
                        [self = shared_from_this()](boost::system::error_code e, size_t) { self->on_read(e); });
}

void HttpExchange::on_read(boost::system::error_code ec) {
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
    pool_.open(timeout_, [self = shared_from_this()](boost::system::error_code e, const char* s,
                                                       std::unique_ptr<Connection> c) {
      self->on_opened(e, s, std::move(c));
    });
    return;
  }
  end(std::string(step) + ": " + ec.message());
}

void HttpExchange::end(const std::string& error) {
  if (error.empty() && conn_ && parser_ && parser_->keep_alive()) {
    beast::get_lowest_layer(conn_->stream).expires_never();  // idle: no deadline until its next request
    pool_.put_back(std::move(conn_));
  }
  conn_.reset();
  if (handlers_.on_end) handlers_.on_end(error);
}

}  // namespace kvgate::client
