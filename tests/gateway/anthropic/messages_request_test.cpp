// Anthropic Messages bodies: every accepted field and how it maps onto the
// chat machinery (messages, tools, generation options), the version
// header, and every refusal naming its field.
#include "gateway/anthropic/messages_request.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "tests/gateway/openai/api_error_matchers.h"

namespace kvgate::anthropic {
namespace {

using openai::ChatMessage;
using openai::ChatRole;
using openai::testing::error_of;
namespace json = boost::json;

// A valid body with `extra` ("\"k\": v, ...") added.
std::string body_with(const std::string& extra, const std::string& messages = R"([{"role": "user", "content": "hi"}])") {
  std::string b = R"({"model": "m", "max_tokens": 16, "messages": )" + messages + "}";
  if (!extra.empty()) b.insert(b.size() - 1, ", " + extra);
  return b;
}

MessagesRequest parse(const std::string& body) { return parse_messages_request(body, Purpose::kCreate); }

// The 400 a body gets, and that its message names `field`.
void expect_refused(const std::string& body, const std::string& field, Purpose purpose = Purpose::kCreate) {
  const openai::ApiError e = error_of([&] { parse_messages_request(body, purpose); });
  EXPECT_EQ(e.status, 400) << body;
  EXPECT_NE(e.message.find(field), std::string::npos) << "'" << e.message << "' does not name " << field;
}

TEST(MessagesRequest, MinimalBody) {
  const MessagesRequest r = parse(body_with(""));
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0], (ChatMessage{ChatRole::kUser, "hi"}));
  EXPECT_EQ(r.options.max_tokens, 16);
  EXPECT_EQ(r.options.temperature, 1.0f);
  EXPECT_EQ(r.options.top_p, 1.0f);
  EXPECT_EQ(r.options.top_k, 0);
  EXPECT_TRUE(r.options.stop.empty());
  EXPECT_FALSE(r.options.stream);
  EXPECT_FALSE(r.tools);
}

TEST(MessagesRequest, EveryGenerationField) {
  const MessagesRequest r = parse(body_with(
      R"("temperature": 0.5, "top_p": 0.9, "top_k": 40, "stop_sequences": ["END", "\n\n"], "stream": true,
         "metadata": {"user_id": "u-1"}, "service_tier": "auto", "thinking": {"type": "disabled"})"));
  EXPECT_EQ(r.options.temperature, 0.5f);
  EXPECT_EQ(r.options.top_p, 0.9f);
  EXPECT_EQ(r.options.top_k, 40);
  EXPECT_EQ(r.options.stop, (std::vector<std::string>{"END", "\n\n"}));
  EXPECT_TRUE(r.options.stream);
  EXPECT_EQ(r.options.user, "u-1");
}

TEST(MessagesRequest, SystemAndBlocksBecomeChatMessages) {
  const MessagesRequest r = parse(R"({"model": "m", "max_tokens": 4,
      "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
      "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                   {"role": "assistant", "content": [{"type": "text", "text": "c", "citations": null}]},
                   {"role": "user", "content": "d"}]})");
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0], (ChatMessage{ChatRole::kSystem, "Be brief.\nBe kind."}));
  EXPECT_EQ(r.messages[1], (ChatMessage{ChatRole::kUser, "a\nb"}));
  EXPECT_EQ(r.messages[2], (ChatMessage{ChatRole::kAssistant, "c"}));
  EXPECT_EQ(r.messages[3], (ChatMessage{ChatRole::kUser, "d"}));
  EXPECT_EQ(parse(body_with(R"("system": "S")")).messages[0], (ChatMessage{ChatRole::kSystem, "S"}));
}

TEST(MessagesRequest, ToolsMapOntoOpenAiFunctions) {
  const MessagesRequest r = parse(body_with(
      R"("tools": [{"name": "get_weather", "description": "Weather.", "input_schema": {"type": "object",
          "properties": {"city": {"type": "string"}}}}, {"name": "t2", "input_schema": {"type": "object"}, "type": "custom"}])"));
  ASSERT_TRUE(r.tools);
  EXPECT_EQ(r.tools->names, (std::vector<std::string>{"get_weather", "t2"}));
  EXPECT_EQ(r.tools->choice, openai::ToolChoice::kAuto);
  EXPECT_TRUE(r.tools->parallel);
  EXPECT_EQ(r.tools->definitions[0],
            json::parse(R"({"type": "function", "function": {"name": "get_weather", "description": "Weather.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}})"));
  EXPECT_EQ(r.tools->definitions[1],
            json::parse(R"({"type": "function", "function": {"name": "t2", "parameters": {"type": "object"}}})"));
}

TEST(MessagesRequest, ToolChoices) {
  const std::string tools = R"("tools": [{"name": "f", "input_schema": {"type": "object"}}], )";
  auto choice = [&](const std::string& c) { return *parse(body_with(tools + R"("tool_choice": )" + c)).tools; };
  EXPECT_EQ(choice(R"({"type": "auto"})").choice, openai::ToolChoice::kAuto);
  EXPECT_EQ(choice(R"({"type": "any"})").choice, openai::ToolChoice::kRequired);
  EXPECT_EQ(choice(R"({"type": "none"})").choice, openai::ToolChoice::kNone);
  const openai::ChatTools named = choice(R"({"type": "tool", "name": "f", "disable_parallel_tool_use": true})");
  EXPECT_EQ(named.choice, openai::ToolChoice::kNamed);
  EXPECT_EQ(named.named, "f");
  EXPECT_FALSE(named.parallel);
  expect_refused(body_with(tools + R"("tool_choice": {"type": "tool", "name": "g"})"), "tool_choice.name");
  expect_refused(body_with(tools + R"("tool_choice": {"type": "required"})"), "tool_choice.type");
  expect_refused(body_with(R"("tool_choice": {"type": "any"})"), "tool_choice");
}

TEST(MessagesRequest, ToolUseAndToolResultRoundTrip) {
  const MessagesRequest r = parse(body_with(
      R"("tools": [{"name": "f", "input_schema": {"type": "object"}}])",
      R"([{"role": "user", "content": "go"},
          {"role": "assistant", "content": [{"type": "text", "text": "calling"},
                                            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": 1}}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"},
                                       {"type": "tool_result", "tool_use_id": "toolu_1",
                                        "content": [{"type": "text", "text": "43"}]},
                                       {"type": "text", "text": "thanks"}]}])"));
  ASSERT_EQ(r.messages.size(), 5u);
  EXPECT_EQ(r.messages[1].role, ChatRole::kAssistant);
  EXPECT_EQ(r.messages[1].content, "calling");
  ASSERT_EQ(r.messages[1].tool_calls.size(), 1u);
  EXPECT_EQ(r.messages[1].tool_calls[0], (openai::ToolCall{"toolu_1", "f", R"({"x":1})"}));
  EXPECT_EQ(r.messages[2], (ChatMessage{ChatRole::kTool, "42", {}, "toolu_1"}));
  EXPECT_EQ(r.messages[3], (ChatMessage{ChatRole::kTool, "43", {}, "toolu_1"}));
  EXPECT_EQ(r.messages[4], (ChatMessage{ChatRole::kUser, "thanks"}));
}

TEST(MessagesRequest, CountTokensNeedsNoMaxTokens) {
  const MessagesRequest r =
      parse_messages_request(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}]})", Purpose::kCountTokens);
  EXPECT_FALSE(r.options.max_tokens);
  expect_refused(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}]})", "max_tokens");
}

TEST(MessagesRequest, RefusalsNameTheField) {
  expect_refused(R"({"max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]})", "model");
  expect_refused(R"({"model": "m", "max_tokens": 1})", "messages");
  expect_refused(R"({"model": "m", "max_tokens": 1, "messages": []})", "messages");
  expect_refused(R"({"model": "m", "max_tokens": "1", "messages": [{"role": "user", "content": "hi"}]})", "max_tokens");
}

TEST(MessagesRequest, RefusesWhatItDoesNotServe) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {body_with(R"("max_tokens": 0)"), "max_tokens"},
      {body_with(R"("temperature": 1.5)"), "temperature"},
      {body_with(R"("top_p": 0)"), "top_p"},
      {body_with(R"("top_k": -1)"), "top_k"},
      {body_with(R"("stop_sequences": "x")"), "stop_sequences"},
      {body_with(R"("stop_sequences": [""])"), "stop_sequences[0]"},
      {body_with(R"("metadata": {"user_id": "u", "x": 1})"), "metadata.x"},
      {body_with(R"("cache_control": {"type": "ephemeral"})"), "cache_control"},
      {body_with(R"("thinking": {"type": "enabled", "budget_tokens": 1024})"), "thinking.type"},
      {body_with(R"("mcp_servers": [])"), "mcp_servers"},
      {body_with(R"("frequency_penalty": 1)"), "frequency_penalty"},
      {body_with("", R"([{"role": "user", "content": [{"type": "image", "source": {}}]}])"), "messages[0].content[0].type"},
      {body_with("", R"([{"role": "system", "content": "x"}])"), "messages[0].role"},
      {body_with("", R"([{"role": "user", "content": "x"}, {"role": "assistant", "content": "prefill"}])"),
       "messages[1].role"},
      {body_with("", R"([{"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "thinking",
          "thinking": "t", "signature": "s"}]}, {"role": "user", "content": "y"}])"),
       "messages[1].content[0].type"},
      {body_with("", R"([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "r"}]}])"),
       "messages[0].content[0].tool_use_id"},
      {body_with("", R"([{"role": "user", "content": "x"}, {"role": "assistant", "content": [{"type": "tool_use",
          "id": "t", "name": "f", "input": {}}]}, {"role": "user", "content": [{"type": "tool_result",
          "tool_use_id": "t", "is_error": true}]}])"),
       "messages[2].content[0].is_error"},
      {body_with(R"("tools": [{"type": "web_search_20250305", "name": "web_search"}])"), "tools[0].type"},
      {body_with(R"("tools": [{"name": "f"}])"), "tools[0].input_schema"},
      {body_with(R"("tools": [{"name": "bad name", "input_schema": {}}])"), "tools[0].name"},
      {body_with(R"("tools": [{"name": "f", "input_schema": {}}, {"name": "f", "input_schema": {}}])"), "tools[1].name"},
  };
  for (const auto& [body, field] : cases) expect_refused(body, field);
}

// cache_control breakpoints: where each ends, as a cut of the request, and
// its ttl; on tools, system blocks and every kind of message block.
TEST(MessagesRequest, CacheControlBreakpoints) {
  const std::string cc = R"("cache_control": {"type": "ephemeral")";
  const MessagesRequest r = parse(body_with(
      R"("tools": [{"name": "f", "input_schema": {}}, {"name": "g", "input_schema": {}, )" + cc +
          R"(, "ttl": "1h"}}],
         "system": [{"type": "text", "text": "abc"}, {"type": "text", "text": "de", )" + cc + R"(, "ttl": "1h"}},
                    {"type": "text", "text": "f"}])",
      R"([{"role": "user", "content": [{"type": "text", "text": "hi", )" + cc + R"(}}, {"type": "text", "text": "x"}]},
          {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}, )" + cc + R"(}}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}])"));
  ASSERT_EQ(r.breakpoints.size(), 4u);
  using std::chrono::seconds;
  EXPECT_EQ(r.breakpoints[0].tools, 2u) << "the tools up to the marked one, no message";
  EXPECT_EQ(r.breakpoints[0].messages, 0u);
  EXPECT_EQ(r.breakpoints[0].ttl, seconds(3600));
  EXPECT_EQ(r.breakpoints[1].tools, std::string::npos);
  EXPECT_EQ(r.breakpoints[1].messages, 1u) << "the system message";
  EXPECT_EQ(r.breakpoints[1].content_bytes, 6u) << "'abc\nde', cut after the marked block";
  EXPECT_EQ(r.breakpoints[1].ttl, seconds(3600));
  EXPECT_EQ(r.breakpoints[2].messages, 2u);
  EXPECT_EQ(r.breakpoints[2].content_bytes, 2u) << "'hi' of 'hi\nx'";
  EXPECT_EQ(r.breakpoints[2].ttl, seconds(300)) << "5m by default";
  EXPECT_EQ(r.breakpoints[3].messages, 3u) << "an assistant block ends after its whole message";
  EXPECT_EQ(r.breakpoints[3].content_bytes, std::string::npos);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].content, "abc\nde\nf");

  const MessagesRequest tool_result = parse(body_with("", R"([{"role": "user", "content": "q"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r", )" + cc + R"(}}]}])"));
  ASSERT_EQ(tool_result.breakpoints.size(), 1u);
  EXPECT_EQ(tool_result.breakpoints[0].messages, 3u) << "after the tool message";
  EXPECT_EQ(tool_result.breakpoints[0].content_bytes, std::string::npos);
}

TEST(MessagesRequest, CacheControlRefusals) {
  const std::string cc = R"("cache_control": {"type": "ephemeral"})";
  const auto text = [&](const std::string& t, const std::string& control) {
    return R"({"type": "text", "text": ")" + t + R"(", )" + control + "}";
  };
  const std::string five = "[" + text("a", cc) + "," + text("b", cc) + "," + text("c", cc) + "," + text("d", cc) +
                           "," + text("e", cc) + "]";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {body_with("", R"([{"role": "user", "content": )" + five + "}]"), "messages[0].content[4].cache_control"},
      {body_with("", R"([{"role": "user", "content": [)" + text("", cc) + "]}]"), "messages[0].content[0].cache_control"},
      {body_with("", R"([{"role": "user", "content": [)" +
                         text("a", R"("cache_control": {"type": "ephemeral", "ttl": "10m"})") + "]}]"),
       "messages[0].content[0].cache_control.ttl"},
      {body_with("", R"([{"role": "user", "content": [)" +
                         text("a", R"("cache_control": {"type": "persistent"})") + "]}]"),
       "messages[0].content[0].cache_control.type"},
      {body_with("", R"([{"role": "user", "content": [)" +
                         text("a", R"("cache_control": {"type": "ephemeral", "scope": "global"})") + "]}]"),
       "messages[0].content[0].cache_control.scope"},
      {body_with(R"("system": [)" + text("s", cc) + "]", R"([{"role": "user", "content": [)" +
                         text("a", R"("cache_control": {"type": "ephemeral", "ttl": "1h"})") + "]}]"),
       "messages[0].content[0].cache_control.ttl"},  // a 1h breakpoint after a 5m one
      {body_with(R"("cache_control": {"type": "ephemeral"})"), "cache_control"},  // not at the top
  };
  for (const auto& [body, field] : cases) expect_refused(body, field);
}

TEST(MessagesRequest, VersionHeader) {
  EXPECT_NO_THROW(check_api_version("2023-06-01"));
  EXPECT_NE(error_of([] { check_api_version(std::nullopt); }).message.find("anthropic-version"), std::string::npos);
  const openai::ApiError wrong = error_of([] { check_api_version("2099-01-01"); });
  EXPECT_EQ(wrong.status, 400);
  EXPECT_NE(wrong.message.find("anthropic-version"), std::string::npos);
  EXPECT_NO_THROW(refuse_betas(std::nullopt));
  EXPECT_NE(error_of([] { refuse_betas("prompt-caching-2024-07-31"); }).message.find("anthropic-beta"),
            std::string::npos);
}

}  // namespace
}  // namespace kvgate::anthropic
