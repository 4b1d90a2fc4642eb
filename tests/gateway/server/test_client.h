// TestClient: a blocking HTTP/1.1 client over Beast for the server tests,
// plain or TLS (verifying the server against a given certificate). Every
// operation runs as an async operation on the client's own io_context
// under a deadline (Beast's stream timeout), so a test that goes wrong
// fails instead of hanging. One thread at a time.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>

namespace kvgate::server::testing {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using Response = http::response<http::string_body>;

// Long enough for a loaded sanitizer build; only a failing test waits it out.
inline constexpr std::chrono::seconds kClientTimeout{20};

class TestClient {
 public:
  struct TlsSettings {
    std::filesystem::path ca_file;  // trust exactly this certificate
    int min_version = 0;            // e.g. TLS1_2_VERSION; 0: library default
    int max_version = 0;
    std::string ciphers;            // TLS 1.2 cipher list; empty: default
  };

  // A plain client.
  TestClient() : plain_(std::in_place, ioc_) {}
  // A TLS client.
  explicit TestClient(const TlsSettings& tls) : ctx_(std::in_place, ssl::context::tls_client) {
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

  beast::tcp_stream& tcp_stream() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }
  SSL* ssl_handle() { return tls_ ? tls_->native_handle() : nullptr; }

  // A small receive buffer, so a client that stops reading fills up fast.
  void shrink_receive_buffer() {
    beast::error_code ec;
    tcp_stream().socket().open(tcp::v4(), ec);
    tcp_stream().socket().set_option(net::socket_base::receive_buffer_size(4096), ec);
  }

  beast::error_code connect(uint16_t port) {
    return run([&](auto done) {
      tcp_stream().expires_after(kClientTimeout);
      tcp_stream().async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                                 [done](beast::error_code ec) mutable { done(ec); });
    });
  }

  beast::error_code handshake() {
    return run([&](auto done) {
      tcp_stream().expires_after(kClientTimeout);
      tls_->async_handshake(ssl::stream_base::client, [done](beast::error_code ec) mutable { done(ec); });
    });
  }

  // connect, then handshake when TLS.
  beast::error_code open(uint16_t port) {
    beast::error_code ec = connect(port);
    if (!ec && tls_) ec = handshake();
    return ec;
  }

  beast::error_code write_raw(const std::string& bytes) {
    return with_stream([&](auto& s) {
      return run([&](auto done) {
        tcp_stream().expires_after(kClientTimeout);
        net::async_write(s, net::buffer(bytes), [done](beast::error_code ec, size_t) mutable { done(ec); });
      });
    });
  }

  beast::error_code send(const std::string& method, const std::string& target, const std::string& body = "",
                         const std::vector<std::pair<std::string, std::string>>& headers = {}) {
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

  // Reads one whole response.
  std::optional<Response> read(beast::error_code* error = nullptr) {
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

  std::optional<Response> request(const std::string& method, const std::string& target, const std::string& body = "",
                                  const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    if (send(method, target, body, headers)) return std::nullopt;
    return read();
  }

  // A response read in steps: the header, then body bytes as they come.
  beast::error_code read_header() {
    stream_parser_.emplace();
    stream_parser_->body_limit(1ull << 30);
    return with_stream([&](auto& s) {
      return run([&](auto done) {
        tcp_stream().expires_after(kClientTimeout);
        http::async_read_header(s, buffer_, *stream_parser_, [done](beast::error_code e, size_t) mutable { done(e); });
      });
    });
  }
  const http::response_parser<http::string_body>& stream_parser() const { return *stream_parser_; }
  // Reads until the body so far contains `needle` (or the message ends).
  beast::error_code read_body_until(const std::string& needle) {
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

  // Reads raw bytes until the server closes (or the timeout); returns what came.
  std::string read_until_closed(beast::error_code* error = nullptr) {
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

  // Whether the server closed the connection: a read ends in EOF, a reset
  // or (TLS) a truncation, rather than data or our timeout.
  // Then closes this end too, as a client seeing the end would.
  bool closed_by_server() {
    beast::error_code ec;
    read_until_closed(&ec);
    close();
    return ec && ec != beast::error::timeout;
  }

  void close() {
    beast::error_code ec;
    tcp_stream().socket().shutdown(tcp::socket::shutdown_both, ec);
    tcp_stream().socket().close(ec);
  }

 private:
  // Starts an async operation with a completion `done(ec)` and runs the
  // io_context until it completes.
  template <class Start>
  beast::error_code run(Start start) {
    std::optional<beast::error_code> result;
    start([&result](beast::error_code ec) { result = ec; });
    ioc_.restart();
    ioc_.run();
    return result.value_or(beast::error::timeout);
  }

  template <class F>
  beast::error_code with_stream(F f) {
    if (tls_) return f(*tls_);
    return f(*plain_);
  }

  net::io_context ioc_;
  std::optional<ssl::context> ctx_;
  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::string_body>> stream_parser_;
};

}  // namespace kvgate::server::testing
