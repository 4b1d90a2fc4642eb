// The OpenAI error shape: the JSON object, null param and code, and the
// status, type and code of every helper.
#include "gateway/openai/api_error.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace kvgate::openai {
namespace {

namespace json = boost::json;

TEST(ApiError, JsonIsOpenAisShapeWithNullsForAbsentFields) {
  const ApiError e(400, "bad", "invalid_request_error");
  const json::value v = json::parse(serialize(e));
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.as_object().size(), 1u);
  const json::object& inner = v.at("error").as_object();
  EXPECT_EQ(inner.size(), 4u);
  EXPECT_EQ(inner.at("message"), "bad");
  EXPECT_EQ(inner.at("type"), "invalid_request_error");
  EXPECT_TRUE(inner.at("param").is_null());
  EXPECT_TRUE(inner.at("code").is_null());
}

TEST(ApiError, JsonCarriesParamAndCode) {
  const ApiError e = invalid_type("temperature", "a number", "a string");
  const json::value v = to_json(e);
  EXPECT_EQ(v.at("error").at("param"), "temperature");
  EXPECT_EQ(v.at("error").at("code"), "invalid_type");
  EXPECT_EQ(v.at("error").at("message"),
            "Invalid type for 'temperature': expected a number, but got a string instead.");
  EXPECT_STREQ(e.what(), e.message.c_str());
}

TEST(ApiError, HelpersHaveTheirStatusTypeAndCode) {
  struct Case {
    ApiError e;
    int status;
    const char* type;
    std::optional<std::string> code;
  };
  const Case cases[] = {
      {invalid_request("x"), 400, "invalid_request_error", std::nullopt},
      {invalid_value("n", "why"), 400, "invalid_request_error", "invalid_value"},
      {missing_parameter("model"), 400, "invalid_request_error", "missing_required_parameter"},
      {invalid_json("syntax error", "line 1"), 400, "invalid_request_error", "invalid_json"},
      {context_length_exceeded(512, 500, 100), 400, "invalid_request_error", "context_length_exceeded"},
      {invalid_api_key(), 401, "authentication_error", "invalid_api_key"},
      {permission_denied("no"), 403, "permission_error", "permission_denied"},
      {model_not_found("gpt-9"), 404, "invalid_request_error", "model_not_found"},
      {route_not_found("GET", "/v2"), 404, "invalid_request_error", "unknown_url"},
      {not_found("no such tenant"), 404, "not_found_error", "not_found"},
      {method_not_allowed("PUT", "/v1/models"), 405, "invalid_request_error", "method_not_allowed"},
      {request_timeout(), 408, "invalid_request_error", "request_timeout"},
      {body_too_large(1 << 20), 413, "invalid_request_error", "body_too_large"},
      {unprocessable("x"), 422, "invalid_request_error", "unprocessable_entity"},
      {rate_limited("slow down"), 429, "rate_limit_error", "rate_limit_exceeded"},
      {headers_too_large(8192), 431, "invalid_request_error", "header_too_large"},
      {internal_error(), 500, "server_error", "internal_error"},
      {overloaded(), 503, "server_error", "overloaded"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.e.message);
    EXPECT_EQ(c.e.status, c.status);
    EXPECT_EQ(c.e.type, c.type);
    EXPECT_EQ(c.e.code, c.code);
    EXPECT_FALSE(c.e.message.empty());
  }
}

TEST(ApiError, MessagesNameWhatIsWrong) {
  EXPECT_EQ(model_not_found("gpt-9").message, "The model 'gpt-9' does not exist or you do not have access to it.");
  EXPECT_EQ(model_not_found("gpt-9").param, "model");
  EXPECT_EQ(route_not_found("POST", "/v1/foo").message, "Invalid URL (POST /v1/foo)");
  EXPECT_EQ(context_length_exceeded(512, 500, 100).message,
            "This model's maximum context length is 512 tokens. However, you requested 600 tokens (500 in the "
            "messages, 100 in the completion). Please reduce the length of the messages or completion.");
  EXPECT_NE(body_too_large(1048576).message.find("1048576 bytes"), std::string::npos);
}

TEST(ApiError, JsonEscapesTheMessage) {
  const ApiError e = invalid_value("stop[0]", "a \"quoted\"\nline");
  const json::value v = json::parse(serialize(e));
  EXPECT_EQ(v.at("error").at("message"), "Invalid value for 'stop[0]': a \"quoted\"\nline");
}

}  // namespace
}  // namespace kvgate::openai
