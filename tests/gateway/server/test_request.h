// An HttpRequest as the server would hand it to a handler, for the suites
// that call a handler directly: method, target (with its query), body and,
// when given, a bearer credential.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gateway/server/http_request.h"

namespace kvgate::server::testing {

inline HttpRequest test_request(std::string method, std::string_view target, std::string body = {},
                                std::optional<std::string> bearer = std::nullopt) {
  HttpRequest req;
  req.method = std::move(method);
  req.target = std::string(target);
  req.body = std::move(body);
  if (bearer) req.headers.push_back({"Authorization", "Bearer " + *bearer});
  return req;
}

}  // namespace kvgate::server::testing
