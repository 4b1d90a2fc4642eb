// One HTTPS request per call, over a fresh connection: resolve, connect,
// TLS handshake (the peer verified against --cacert, or the system's trust
// store, or not at all with --insecure), write, read the whole response.
// Every step is bounded by the timeout. Failures to get an answer are
// CliError(kUnreachable) naming the address; an answer of any status is
// returned as it came.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvgatectl {

struct ServerUrl {
  std::string host;  // as written, without [] for IPv6
  std::string port = "443";
  std::string host_header;  // host[:port] as written
  std::string text() const { return "https://" + host_header; }
};

// "https://HOST[:PORT][/]"; anything else is a usage error.
ServerUrl parse_server_url(std::string_view url);

struct TlsTrust {
  std::string ca_file;  // PEM; empty: the system's trust store
  bool insecure = false;  // no verification at all
};

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

class HttpsClient {
 public:
  HttpsClient(ServerUrl url, TlsTrust trust, std::chrono::milliseconds timeout)
      : url_(std::move(url)), trust_(std::move(trust)), timeout_(timeout) {}

  HttpResponse send(std::string_view method, std::string_view target, const HeaderList& headers,
                    const std::string& body) const;

  const ServerUrl& url() const { return url_; }

 private:
  ServerUrl url_;
  TlsTrust trust_;
  std::chrono::milliseconds timeout_;
};

}  // namespace kvgatectl
