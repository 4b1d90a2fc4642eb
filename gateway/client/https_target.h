// The server a client talks to: its https:// URL, read once, and the
// client TLS context (trust exactly the server's certificate, or, with
// insecure, nothing at all).
//
// The self-signed certificate kvgate makes is for CN=localhost with the
// subject alternative names localhost and 127.0.0.1, so the client checks
// the URL's host against it: an IP address as an IP, a name as a name.
//
// Values; the ssl::context is shared by every connection of a pool and
// used from its one io thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/ssl/context.hpp>

namespace kvgate::client {

struct HttpsTarget {
  std::string host;  // as written, without [] for IPv6
  std::string port = "443";
  std::string host_header;  // host[:port], for the Host header
};

// "https://HOST[:PORT][/]". Anything else, plain http:// included, is an
// Error saying what was expected, starting with `shown_as` (the flag or
// setting the URL came from) and the URL.
HttpsTarget parse_https_url(std::string_view url, std::string_view shown_as = "--url");

struct TlsTrust {
  std::string ca_file;  // PEM; empty: the system's trust store
  bool insecure = false;
};

// Throws kvgate::Error naming the file when it cannot be loaded.
std::shared_ptr<boost::asio::ssl::context> make_client_tls(const TlsTrust& trust);

}  // namespace kvgate::client
