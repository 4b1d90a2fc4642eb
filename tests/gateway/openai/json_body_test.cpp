// Bodies that are not a JSON object: each is a 400 that says where, and
// ill-formed UTF-8 is refused by kvgate's own check (and, as verified
// here, by Boost.JSON 1.81 too, though only as a bare "syntax error").
#include "gateway/openai/json_body.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "gateway/openai/api_error.h"
#include "tests/gateway/openai/api_error_matchers.h"

namespace kvgate::openai {
namespace {

using testing::error_of;
namespace json = boost::json;

bool mentions(const ApiError& e, std::string_view s) { return e.message.find(s) != std::string::npos; }

TEST(JsonBody, ParsesAnObject) {
  const json::object o = parse_json_object(R"({"a": 1, "b": "\u00e9\ud83d\ude00"})");
  EXPECT_EQ(o.at("a"), 1);
  EXPECT_EQ(o.at("b"), "\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(JsonBody, MalformedJsonNamesLineColumnAndByte) {
  const ApiError e = error_of([] { parse_json_object("{\n  \"a\": tru }"); });
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.code, "invalid_json");
  EXPECT_FALSE(e.param);
  EXPECT_TRUE(mentions(e, "line 2, column 8 (byte 9)")) << e.message;
}

TEST(JsonBody, EachKindOfBadBodyIsA400) {
  struct Case {
    std::string body;
    std::string says;
  };
  const Case cases[] = {
      {"", "the body is empty"},
      {"  \n", "the body is empty"},
      {"{\"a\": 1", "line 1, column 8"},      // incomplete: at the end
      {"{\"a\": 1,}", "line 1, column 9"},    // trailing comma
      {"{} {}", "line 1, column 4"},          // trailing data
      {"[1, 2]", "not a JSON object"},
      {"\"text\"", "not a JSON object"},
      {"42", "not a JSON object"},
      {"null", "not a JSON object"},
      {"{'a': 1}", "line 1, column 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    const ApiError e = error_of([&] { parse_json_object(c.body); });
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.code, "invalid_json");
    EXPECT_TRUE(mentions(e, c.says)) << e.message;
  }
}

TEST(JsonBody, NestingPastTheLimitIsRefused) {
  std::string deep = "{\"a\":" + std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']') + "}";
  const ApiError e = error_of([&] { parse_json_object(deep); });
  EXPECT_EQ(e.code, "invalid_json");
  std::string ok = "{\"a\":" + std::string(kMaxJsonDepth - 2, '[') + std::string(kMaxJsonDepth - 2, ']') + "}";
  EXPECT_NO_THROW(parse_json_object(ok));
}

TEST(JsonBody, InvalidUtf8IsA400NamingTheByte) {
  struct Case {
    std::string body;
    std::string says;
  };
  const Case cases[] = {
      {"{\"a\": \"\xff\"}", "byte 7"},                  // never valid
      {"{\"a\": \"\xc0\xaf\"}", "byte 7"},              // overlong '/'
      {"{\"a\": \"\xed\xa0\x80\"}", "byte 7"},          // an encoded surrogate
      {"{\"a\": \"\xf4\x90\x80\x80\"}", "byte 7"},      // past U+10FFFF
      {"{\"a\": \"ok\xe2\x82\"}", "byte 9"},            // truncated
      {"{\"\xfe\": 1}", "byte 2"},                      // in a key
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.says);
    const ApiError e = error_of([&] { parse_json_object(c.body); });
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.code, "invalid_utf8");
    EXPECT_TRUE(mentions(e, c.says)) << e.message;
  }
}

TEST(JsonBody, LoneSurrogateEscapesAreRefused) {
  for (const char* body : {R"({"a": "\ud800"})", R"({"a": "\udc00x"})", R"({"a": "\ud800\u0041"})"}) {
    SCOPED_TRACE(body);
    const ApiError e = error_of([&] { parse_json_object(body); });
    EXPECT_EQ(e.status, 400);
  }
}

// What the explicit check is a backstop for: Boost.JSON 1.81 refuses these
// bytes by itself, but names nothing ("syntax error"). If an upgrade starts
// accepting them, this test says so, and parse_json_object still refuses.
TEST(JsonBody, BoostJsonItselfRefusesIllFormedUtf8) {
  for (const char* body : {"\"\xff\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\\ud800\""}) {
    json::error_code ec;
    json::parse(body, ec);
    EXPECT_TRUE(ec) << "Boost.JSON accepted " << body;
  }
}

TEST(JsonBody, FirstInvalidUtf8) {
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("\xc3\xa9\xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("ab\x80"), 2u);
  EXPECT_EQ(first_invalid_utf8("\xe2\x82"), 0u);
  EXPECT_EQ(first_invalid_utf8(std::string_view("a\0b", 3)), std::nullopt);
}

}  // namespace
}  // namespace kvgate::openai
