#include "tests/gateway/server/test_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace kvgate::server::testing {

TestClient::TestClient() : plain_(std::in_place, ioc_) {}

TestClient::TestClient(const TlsSettings& tls) : ctx_(std::in_place, ssl::context::tls_client) {
  ctx_->set_verify_mode(ssl::verify_peer);
  ctx_->load_verify_file(tls.ca_file.string());
  if (tls.min_version) SSL_CTX_set_min_proto_version(ctx_->native_handle(), tls.min_version);
  if (tls.max_version) SSL_CTX_set_max_proto_version(ctx_->native_handle(), tls.max_version);
  if (!tls.ciphers.empty()) SSL_CTX_set_cipher_list(ctx_->native_handle(), tls.ciphers.c_str());
  // TLS 1.1 and below need security level 0 in OpenSSL 3 (so the server, not the client, refuses).
  if (tls.max_version && tls.max_version < TLS1_2_VERSION) SSL_CTX_set_security_level(ctx_->native_handle(), 0);
  tls_.emplace(ioc_, *ctx_);
  SSL_set_tlsext_host_name(tls_->native_handle(), "localhost");
  tls_->set_verify_callback(ssl::host_name_verification("localhost"));
}

// Starts an async operation with a completion `done(ec)` and runs the
// io_context until it completes.
template <class Start>
beast::error_code TestClient::run(Start start) {
  std::optional<beast::error_code> result;
  start([&result](beast::error_code ec) { result = ec; });
  ioc_.restart();
  ioc_.run();
  return result.value_or(beast::error::timeout);
}

template <class F>
beast::error_code TestClient::with_stream(F f) {
  if (tls_) return f(*tls_);
  return f(*plain_);
}

void TestClient::shrink_receive_buffer() {
  beast::error_code ec;
  tcp_stream().socket().open(tcp::v4(), ec);
  tcp_stream().socket().set_option(net::socket_base::receive_buffer_size(4096), ec);
}

beast::error_code TestClient::connect(uint16_t port) {
  if (!local_address_.empty()) {
    beast::error_code ec;
    tcp::socket& socket = tcp_stream().socket();
    socket.open(tcp::v4(), ec);
    if (!ec) socket.bind(tcp::endpoint(net::ip::make_address(local_address_), 0), ec);
    if (ec) return ec;
  }
  return run([&](auto done) {
    tcp_stream().expires_after(kClientTimeout);
    tcp_stream().async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                               [done](beast::error_code ec) mutable { done(ec); });
  });
}

beast::error_code TestClient::handshake() {
  return run([&](auto done) {
    tcp_stream().expires_after(kClientTimeout);
    tls_->async_handshake(ssl::stream_base::client, [done](beast::error_code ec) mutable { done(ec); });
  });
}

beast::error_code TestClient::open(uint16_t port) {
  beast::error_code ec = connect(port);
  if (!ec && tls_) ec = handshake();
  return ec;
}

beast::error_code TestClient::write_raw(const std::string& bytes) {
  return with_stream([&](auto& s) {
    return run([&](auto done) {
      tcp_stream().expires_after(kClientTimeout);
      net::async_write(s, net::buffer(bytes), [done](beast::error_code ec, size_t) mutable { done(ec); });
    });
  });
}

beast::error_code TestClient::send(const std::string& method, const std::string& target, const std::string& body,
                                   const Headers& headers) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, "localhost");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.body() = body;
  if (!body.empty() || method == "POST") req.prepare_payload();
  return with_stream([&](auto& s) {
    return run([&](auto done) {
      tcp_stream().expires_after(kClientTimeout);
      http::async_write(s, req, [done](beast::error_code ec, size_t) mutable { done(ec); });
    });
  });
}

std::optional<Response> TestClient::read(beast::error_code* error) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(1ull << 30);
  beast::error_code ec = with_stream([&](auto& s) {
    return run([&](auto done) {
      tcp_stream().expires_after(kClientTimeout);
      http::async_read(s, buffer_, parser, [done](beast::error_code e, size_t) mutable { done(e); });
    });
  });
  if (error) *error = ec;
  if (ec) return std::nullopt;
  return parser.release();
}

std::optional<Response> TestClient::request(const std::string& method, const std::string& target,
                                            const std::string& body, const Headers& headers) {
  if (send(method, target, body, headers)) return std::nullopt;
  return read();
}

beast::error_code TestClient::read_header() {
  stream_parser_.emplace();
  stream_parser_->body_limit(1ull << 30);
  return with_stream([&](auto& s) {
    return run([&](auto done) {
      tcp_stream().expires_after(kClientTimeout);
      http::async_read_header(s, buffer_, *stream_parser_, [done](beast::error_code e, size_t) mutable { done(e); });
    });
  });
}

beast::error_code TestClient::read_body_until(const std::string& needle) {
  while (stream_parser_->get().body().find(needle) == std::string::npos && !stream_parser_->is_done()) {
    beast::error_code ec = with_stream([&](auto& s) {
      return run([&](auto done) {
        tcp_stream().expires_after(kClientTimeout);
        http::async_read_some(s, buffer_, *stream_parser_, [done](beast::error_code e, size_t) mutable { done(e); });
      });
    });
    if (ec) return ec;
  }
  return {};
}

std::string TestClient::read_until_closed(beast::error_code* error) {
  std::string out(static_cast<const char*>(buffer_.data().data()), buffer_.size());
  buffer_.consume(buffer_.size());
  beast::error_code ec;
  for (;;) {
    char chunk[4096];
    size_t n = 0;
    ec = with_stream([&](auto& s) {
      return run([&](auto done) {
        tcp_stream().expires_after(kClientTimeout);
        s.async_read_some(net::buffer(chunk), [done, &n](beast::error_code e, size_t got) mutable {
          n = got;
          done(e);
        });
      });
    });
    out.append(chunk, n);
    if (ec) break;
  }
  if (error) *error = ec;
  return out;
}

bool TestClient::closed_by_server() {
  beast::error_code ec;
  read_until_closed(&ec);
  close();
  return ec && ec != beast::error::timeout;
}

void TestClient::close() {
  beast::error_code ec;
  tcp_stream().socket().shutdown(tcp::socket::shutdown_both, ec);
  tcp_stream().socket().close(ec);
}

}  // namespace kvgate::server::testing
