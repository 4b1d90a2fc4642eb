// TestClient: a blocking HTTP/1.1 client over Beast for the server tests,
// plain or TLS (verifying the server against a given certificate). Every
// operation runs as an async operation on the client's own io_context
// under a deadline (Beast's stream timeout), so a test that goes wrong
// fails instead of hanging. One thread at a time.
//
// The operations are defined in test_client.cpp: Beast's composed
// operations, instantiated for both stream types, are most of a server
// suite's build time, and there they are built once.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // A plain client.
  TestClient();
  // A TLS client.
  explicit TestClient(const TlsSettings& tls);

  beast::tcp_stream& tcp_stream() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }
  SSL* ssl_handle() { return tls_ ? tls_->native_handle() : nullptr; }

  // A small receive buffer, so a client that stops reading fills up fast.
  void shrink_receive_buffer();

  // Connections come from this loopback address (127.0.0.x), for
  // per-address limits; by default the kernel's choice (127.0.0.1).
  void from_address(std::string address) { local_address_ = std::move(address); }
  beast::error_code connect(uint16_t port);
  beast::error_code handshake();
  // connect, then handshake when TLS.
  beast::error_code open(uint16_t port);

  beast::error_code write_raw(const std::string& bytes);
  beast::error_code send(const std::string& method, const std::string& target, const std::string& body = "",
                         const Headers& headers = {});

  // Reads one whole response.
  std::optional<Response> read(beast::error_code* error = nullptr);
  std::optional<Response> request(const std::string& method, const std::string& target, const std::string& body = "",
                                  const Headers& headers = {});

  // A response read in steps: the header, then body bytes as they come.
  beast::error_code read_header();
  const http::response_parser<http::string_body>& stream_parser() const { return *stream_parser_; }
  // Reads until the body so far contains `needle` (or the message ends).
  beast::error_code read_body_until(const std::string& needle);

  // Reads raw bytes until the server closes (or the timeout); returns what came.
  std::string read_until_closed(beast::error_code* error = nullptr);

  // Whether the server closed the connection: a read ends in EOF, a reset
  // or (TLS) a truncation, rather than data or our timeout.
  // Then closes this end too, as a client seeing the end would.
  bool closed_by_server();

  void close();

 private:
  template <class Start>
  beast::error_code run(Start start);
  template <class F>
  beast::error_code with_stream(F f);

  net::io_context ioc_;
  std::optional<ssl::context> ctx_;
  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::string_body>> stream_parser_;
  std::string local_address_;
};

}  // namespace kvgate::server::testing
