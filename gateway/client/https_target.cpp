// URL and TLS context of the server a pool talks to.
#include "gateway/client/https_target.h"

#include <openssl/ssl.h>

#include "base/error.h"

namespace kvgate::client {

HttpsTarget parse_https_url(std::string_view url, std::string_view shown_as) {
  std::string shown(shown_as);
  shown.append(" ").append(url).append(": ");
  auto fail = [&](const std::string& what) -> void { throw Error(shown + what); };
  constexpr std::string_view scheme = "https://";
  if (url.substr(0, scheme.size()) != scheme)
    fail("expected https://HOST:PORT (HTTPS only)");
  url.remove_prefix(scheme.size());
  if (!url.empty() && url.back() == '/') url.remove_suffix(1);
  if (url.find('/') != std::string_view::npos) fail("give the server's root, without a path");
  HttpsTarget t;
  std::string_view port;
  bool has_port = false;
  if (!url.empty() && url.front() == '[') {
    const size_t close = url.find(']');
    if (close == std::string_view::npos) fail("unclosed [ in the host");
    t.host = std::string(url.substr(1, close - 1));
    const std::string_view rest = url.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') fail("expected :PORT after the host");
      port = rest.substr(1);
      has_port = true;
    }
  } else {
    const size_t colon = url.rfind(':');
    t.host = std::string(url.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = url.substr(colon + 1);
      has_port = true;
    }
  }
  if (t.host.empty()) fail("no host");
  if (has_port) {
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
        std::stoi(std::string(port)) > 65535 || std::stoi(std::string(port)) == 0)
      fail("the port must be a number from 1 to 65535");
    t.port = std::string(port);
  }
  const std::string host_part = t.host.find(':') != std::string::npos ? "[" + t.host + "]" : t.host;
  t.host_header = has_port ? host_part + ":" + t.port : host_part;
  return t;
}

std::shared_ptr<boost::asio::ssl::context> make_client_tls(const TlsTrust& trust) {
  namespace ssl = boost::asio::ssl;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  if (trust.insecure) {
    ctx->set_verify_mode(ssl::verify_none);
    return ctx;
  }
  ctx->set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  if (trust.ca_file.empty()) {
    ctx->set_default_verify_paths(ec);
    if (ec) throw Error("cannot load the system's trusted certificates: " + ec.message());
  } else {
    ctx->load_verify_file(trust.ca_file, ec);
    if (ec) throw Error(trust.ca_file + ": cannot load the CA certificate: " + ec.message());
  }
  return ctx;
}

}  // namespace kvgate::client
