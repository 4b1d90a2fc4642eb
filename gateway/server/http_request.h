// HttpRequest: one parsed request as the server hands it to the Handler:
// method, target, version, headers and the whole body (already checked
// against the body limit). A plain value, owned by whoever holds it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gateway/server/http_headers.h"

namespace kvgate::server {

struct HttpRequest {
  std::string method;   // as sent: "GET", "POST", ...
  std::string target;   // origin form, with the query: "/v1/models?x=1"
  int version = 11;     // 11 for HTTP/1.1, 10 for HTTP/1.0
  HttpHeaders headers;  // in arrival order
  std::string body;
  bool secure = false;  // arrived over TLS
  std::string peer;     // the client's "address:port"

  // The first header called `name` (case-insensitive), or nothing.
  std::optional<std::string_view> header(std::string_view name) const { return find_header(headers, name); }
  // The target without its query string.
  std::string_view path() const {
    std::string_view t = target;
    return t.substr(0, t.find('?'));
  }
};

}  // namespace kvgate::server
