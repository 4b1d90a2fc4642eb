// Whether a response is an error as OpenAI's clients parse it
// (api_error.h): the status, a JSON Content-Type, and a body of exactly
//   {"error": {"message": "...", "type": T, "param": P or null, "code": C or null}}
// with a non-empty message. For EXPECT_TRUE / ASSERT_TRUE: a mismatch says
// what came instead.
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "gateway/server/reply_target.h"

namespace kvgate::serving::testing {

inline ::testing::AssertionResult is_api_error(const server::ReplyEvent& e, int status, std::string_view type,
                                               const std::optional<std::string>& code,
                                               const std::optional<std::string>& param = std::nullopt) {
  namespace json = boost::json;
  auto fail = [&](std::string_view why) {
    return ::testing::AssertionFailure() << why << ": status " << e.status << ", body " << e.body;
  };
  if (e.kind != server::ReplyEvent::Kind::kSend) return fail("not a whole response");
  if (e.status != status) return fail("expected status " + std::to_string(status));
  const auto content_type = server::find_header(e.headers, "content-type");
  if (!content_type || *content_type != "application/json") return fail("not application/json");
  boost::system::error_code ec;
  const json::value body = json::parse(e.body, ec);
  if (ec || !body.is_object() || body.as_object().size() != 1 || !body.as_object().contains("error"))
    return fail("not {\"error\": {...}}");
  const json::value& err = body.at("error");
  if (!err.is_object() || err.as_object().size() != 4)
    return fail("the error object is not {message, type, param, code}");
  const json::object& o = err.as_object();
  if (!o.contains("message") || !o.at("message").is_string() || o.at("message").as_string().empty())
    return fail("no message");
  if (!o.contains("type") || o.at("type") != json::value(type)) return fail("expected type " + std::string(type));
  auto string_or_null = [](const std::optional<std::string>& s) { return s ? json::value(*s) : json::value(nullptr); };
  if (!o.contains("code") || o.at("code") != string_or_null(code))
    return fail("expected code " + code.value_or("null"));
  if (!o.contains("param") || o.at("param") != string_or_null(param))
    return fail("expected param " + param.value_or("null"));
  return ::testing::AssertionSuccess();
}

}  // namespace kvgate::serving::testing
