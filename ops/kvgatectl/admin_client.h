// The admin API as kvgatectl sees it: JSON in and out over HttpsClient,
// with the admin token as the bearer. Answers are mapped to CliErrors:
// 401/403 to kBadToken, any other status of 400 or more to kRefused with
// the server's own message (its OpenAI-shaped {"error":{"message",...}}).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "ops/kvgatectl/https_client.h"

namespace kvgatectl {

class AdminClient {
 public:
  AdminClient(HttpsClient http, std::string token) : http_(std::move(http)), token_(std::move(token)) {}

  boost::json::value get(std::string_view target) const { return json_call("GET", target, std::nullopt); }
  boost::json::value post(std::string_view target, const boost::json::value& body) const {
    return json_call("POST", target, body);
  }
  boost::json::value put(std::string_view target, const boost::json::value& body) const {
    return json_call("PUT", target, body);
  }
  boost::json::value patch(std::string_view target, const boost::json::value& body) const {
    return json_call("PATCH", target, body);
  }
  boost::json::value del(std::string_view target) const { return json_call("DELETE", target, std::nullopt); }

  // A GET whose answer is not JSON (the CSV export): the body as it came.
  std::string get_text(std::string_view target) const;

 private:
  boost::json::value json_call(std::string_view method, std::string_view target,
                               const std::optional<boost::json::value>& body) const;
  HttpResponse call(std::string_view method, std::string_view target, const std::string& body,
                    bool has_body) const;

  HttpsClient http_;
  std::string token_;
};

// A path segment, percent-encoded but for letters, digits and -_.~ (ids never need it;
// a stray '/' or '?' then cannot change the route).
std::string path_segment(std::string_view s);
// A query value, percent-encoded the same way.
std::string query_value(std::string_view s);

}  // namespace kvgatectl
