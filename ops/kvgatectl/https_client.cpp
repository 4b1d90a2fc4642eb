#include "ops/kvgatectl/https_client.h"

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <limits>

#include "ops/kvgatectl/cli_error.h"

namespace kvgatectl {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Starts one asynchronous operation and runs the io_context until it ends;
// the tcp_stream's expiry bounds it (it then ends with beast::error::timeout).
template <class Start>
error_code run_one(asio::io_context& io, Start&& start) {
  error_code result = asio::error::would_block;
  start([&result](error_code ec, auto&&...) { result = ec; });
  io.restart();
  io.run();
  return result;
}

bool is_ip_address(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

std::string tls_failure(const ServerUrl& url, SSL* ssl, const error_code& ec, bool verifying) {
  std::string m = "TLS handshake with " + url.host_header + " failed: ";
  const long verify = SSL_get_verify_result(ssl);
  if (verifying && verify != X509_V_OK) {
    m += "the server's certificate was not accepted (";
    m += X509_verify_cert_error_string(verify);
    m += "); pass --cacert with the server's certificate (<data-dir>/tls/self-signed.crt for a self-signed one), "
         "or --insecure to skip the check";
    return m;
  }
  return m + ec.message();
}

}  // namespace

ServerUrl parse_server_url(std::string_view url) {
  constexpr std::string_view kScheme = "https://";
  if (!url.starts_with(kScheme))
    throw usage_error("--server must be an https:// URL, e.g. https://127.0.0.1:8443 (got '" + std::string(url) + "')");
  std::string_view rest = url.substr(kScheme.size());
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos)
    throw usage_error("--server must be https://HOST[:PORT] (got '" + std::string(url) + "')");
  ServerUrl u;
  u.host_header = std::string(rest);
  std::string_view port;
  if (rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) throw usage_error("--server: unclosed '[' in '" + std::string(url) + "'");
    u.host = std::string(rest.substr(1, close - 1));
    std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') throw usage_error("--server: expected ':PORT' after ']' in '" + std::string(url) + "'");
      port = after.substr(1);
    }
  } else {
    const size_t colon = rest.rfind(':');
    u.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
  }
  if (u.host.empty()) throw usage_error("--server: no host in '" + std::string(url) + "'");
  if (!port.empty() || rest.back() == ':') {
    bool ok = !port.empty() && port.size() <= 5;
    for (char c : port) ok = ok && c >= '0' && c <= '9';
    if (!ok || std::stoul(std::string(port)) > 65535)
      throw usage_error("--server: bad port in '" + std::string(url) + "'");
    u.port = std::string(port);
  }
  return u;
}

HttpResponse HttpsClient::send(std::string_view method, std::string_view target, const HeaderList& headers,
                               const std::string& body) const {
  asio::io_context io;
  ssl::context ctx(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  const bool verifying = !trust_.insecure;
  if (verifying) {
    error_code ec;
    if (!trust_.ca_file.empty()) {
      ctx.load_verify_file(trust_.ca_file, ec);
      if (ec) throw usage_error("--cacert " + trust_.ca_file + ": cannot load a PEM certificate from it");
    } else {
      ctx.set_default_verify_paths(ec);
    }
    ctx.set_verify_mode(ssl::verify_peer);
  } else {
    ctx.set_verify_mode(ssl::verify_none);
  }

  beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
  SSL* ssl_handle = stream.native_handle();
  if (is_ip_address(url_.host)) {
    // The self-signed certificate names IP:127.0.0.1: check the address as an address.
    if (verifying) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_handle), url_.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl_handle, url_.host.c_str());
    if (verifying) SSL_set1_host(ssl_handle, url_.host.c_str());
  }

  const std::string where = url_.host_header;
  tcp::resolver resolver(io);
  error_code ec;
  const tcp::resolver::results_type endpoints = resolver.resolve(url_.host, url_.port, ec);
  if (ec) throw unreachable("cannot resolve " + url_.host + ": " + ec.message());

  beast::tcp_stream& tcp_layer = beast::get_lowest_layer(stream);
  tcp_layer.expires_after(timeout_);
  ec = run_one(io, [&](auto handler) { tcp_layer.async_connect(endpoints, std::move(handler)); });
  if (ec == beast::error::timeout) throw unreachable("cannot connect to " + where + ": no answer within the timeout");
  if (ec) throw unreachable("cannot connect to " + where + ": " + ec.message());

  tcp_layer.expires_after(timeout_);
  ec = run_one(io, [&](auto handler) { stream.async_handshake(ssl::stream_base::client, std::move(handler)); });
  if (ec == beast::error::timeout) throw unreachable("TLS handshake with " + where + " timed out");
  if (ec) throw unreachable(tls_failure(url_, ssl_handle, ec, verifying));

  http::request<http::string_body> req;
  req.method_string(std::string(method));
  req.target(std::string(target));
  req.version(11);
  req.set(http::field::host, url_.host_header);
  req.set(http::field::user_agent, "kvgatectl");
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  req.prepare_payload();

  tcp_layer.expires_after(timeout_);
  ec = run_one(io, [&](auto handler) { http::async_write(stream, req, std::move(handler)); });
  if (ec == beast::error::timeout) throw unreachable("sending to " + where + " timed out");
  if (ec) throw unreachable("sending to " + where + " failed: " + ec.message());

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a CSV export can be large
  tcp_layer.expires_after(timeout_);
  ec = run_one(io, [&](auto handler) { http::async_read(stream, buffer, parser, std::move(handler)); });
  if (ec == beast::error::timeout) throw unreachable("no answer from " + where + " within the timeout");
  if (ec) throw unreachable("reading the answer from " + where + " failed: " + ec.message());

  HttpResponse out;
  const auto& res = parser.get();
  out.status = static_cast<int>(res.result_int());
  if (auto it = res.find(http::field::content_type); it != res.end()) out.content_type = std::string(it->value());
  out.body = std::move(parser.release().body());

  // A short, best-effort close_notify; the answer is already in hand.
  tcp_layer.expires_after(std::chrono::seconds(1));
  run_one(io, [&](auto handler) { stream.async_shutdown(std::move(handler)); });
  return out;
}

}  // namespace kvgatectl
