// The message object, its stop_reason and usage, the stream's events in
// Anthropic's order and shape, and the error shape.
#include "gateway/anthropic/message_response.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "gateway/anthropic/api_error.h"
#include "gateway/anthropic/stream_events.h"

namespace kvgate::anthropic {
namespace {

namespace json = boost::json;

openai::UsageReport usage(uint64_t prompt, uint64_t cached, uint64_t output) {
  openai::UsageReport u;
  u.prompt_tokens = prompt;
  u.cached_device_tokens = cached;
  u.fresh_prefill_tokens = prompt - cached;
  u.completion_tokens = output;
  u.cost_micros = 7;
  return u;
}

// An event frame's name and data.
std::pair<std::string, json::value> event(const std::string& frame) {
  EXPECT_TRUE(frame.starts_with("event: ")) << frame;
  EXPECT_TRUE(frame.ends_with("\n\n")) << frame;
  const auto nl = frame.find('\n');
  const std::string name = frame.substr(7, nl - 7);
  EXPECT_EQ(frame.substr(nl + 1, 6), "data: ");
  json::value data = json::parse(frame.substr(nl + 7));
  EXPECT_EQ(data.at("type").as_string(), name);  // the type repeated in the JSON
  return {name, std::move(data)};
}

std::vector<std::string> names(const std::vector<std::string>& frames) {
  std::vector<std::string> out;
  for (const std::string& f : frames) out.push_back(event(f).first);
  return out;
}

TEST(MessageResponse, StopReasons) {
  EXPECT_EQ(stop_reason(FinishReason::kStop, "", false), StopReason::kEndTurn);
  EXPECT_EQ(stop_reason(FinishReason::kLength, "", false), StopReason::kMaxTokens);
  EXPECT_EQ(stop_reason(FinishReason::kStop, "END", false), StopReason::kStopSequence);
  EXPECT_EQ(stop_reason(FinishReason::kStop, "", true), StopReason::kToolUse);
  EXPECT_EQ(stop_reason_name(StopReason::kStopSequence), "stop_sequence");
}

TEST(MessageResponse, UsageSplitsThePromptIntoReadsAndInput) {
  const json::object u = usage_json(usage(100, 64, 5));
  EXPECT_EQ(u.at("input_tokens").to_number<uint64_t>(), 36u);
  EXPECT_EQ(u.at("cache_read_input_tokens").to_number<uint64_t>(), 64u);
  EXPECT_EQ(u.at("cache_creation_input_tokens").to_number<uint64_t>(), 0u);
  EXPECT_EQ(u.at("output_tokens").to_number<uint64_t>(), 5u);
  EXPECT_EQ(u.at("kvgate").at("cost_micros").to_number<uint64_t>(), 7u);
}

TEST(MessageResponse, PinnedWritesAreCacheCreationByTtl) {
  openai::UsageReport u = usage(100, 32, 5);
  u.cache_write_5m_tokens = 16;
  u.cache_write_1h_tokens = 48;
  const json::object j = usage_json(u);
  EXPECT_EQ(j.at("input_tokens").to_number<uint64_t>(), 4u);
  EXPECT_EQ(j.at("cache_creation_input_tokens").to_number<uint64_t>(), 64u);
  EXPECT_EQ(j.at("cache_read_input_tokens").to_number<uint64_t>(), 32u);
  EXPECT_EQ(j.at("cache_creation"),
            json::parse(R"({"ephemeral_5m_input_tokens": 16, "ephemeral_1h_input_tokens": 48})"));
}

TEST(MessageResponse, TextMessage) {
  const json::value m = message_response({"msg_x", "stories"}, "Once", {}, StopReason::kStopSequence, "END",
                                         usage(10, 0, 2));
  EXPECT_EQ(m.at("id").as_string(), "msg_x");
  EXPECT_EQ(m.at("type").as_string(), "message");
  EXPECT_EQ(m.at("role").as_string(), "assistant");
  EXPECT_EQ(m.at("model").as_string(), "stories");
  EXPECT_EQ(m.at("content"), json::parse(R"([{"type": "text", "text": "Once"}])"));
  EXPECT_EQ(m.at("stop_reason").as_string(), "stop_sequence");
  EXPECT_EQ(m.at("stop_sequence").as_string(), "END");
  EXPECT_EQ(message_response({"m", "s"}, "", {}, StopReason::kEndTurn, "", usage(1, 0, 0)).at("content"),
            json::parse(R"([{"type": "text", "text": ""}])"));
  EXPECT_TRUE(message_response({"m", "s"}, "a", {}, StopReason::kEndTurn, "", usage(1, 0, 1)).at("stop_sequence").is_null());
}

TEST(MessageResponse, ToolUseMessage) {
  const std::vector<openai::ToolCall> calls = {{"toolu_1", "f", R"({"x": 1})"}};
  const json::value m = message_response({"m", "s"}, "", calls, StopReason::kToolUse, "", usage(1, 0, 1));
  EXPECT_EQ(m.at("content"), json::parse(R"([{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"x": 1}}])"));
  EXPECT_EQ(m.at("stop_reason").as_string(), "tool_use");
  EXPECT_EQ(message_response({"m", "s"}, "I will.", calls, StopReason::kToolUse, "", usage(1, 0, 1)).at("content").as_array().size(), 2u);
}

TEST(StreamEvents, TextStream) {
  MessageEvents ev({"msg_1", "stories"});
  const std::vector<std::string> start = ev.start(12);
  EXPECT_EQ(names(start), (std::vector<std::string>{"message_start", "ping"}));
  const json::value message = event(start[0]).second.at("message");
  EXPECT_EQ(message.at("id").as_string(), "msg_1");
  EXPECT_TRUE(message.at("content").as_array().empty());
  EXPECT_TRUE(message.at("stop_reason").is_null());
  EXPECT_EQ(message.at("usage").at("input_tokens").to_number<uint64_t>(), 12u);

  const std::vector<std::string> a = ev.text("Once");
  EXPECT_EQ(names(a), (std::vector<std::string>{"content_block_start", "content_block_delta"}));
  EXPECT_EQ(event(a[0]).second.at("content_block"), json::parse(R"({"type": "text", "text": ""})"));
  EXPECT_EQ(event(a[1]).second, json::parse(R"({"type": "content_block_delta", "index": 0,
                                                 "delta": {"type": "text_delta", "text": "Once"}})"));
  EXPECT_EQ(names(ev.text(" upon")), (std::vector<std::string>{"content_block_delta"}));
  EXPECT_TRUE(ev.text("").empty());

  const std::vector<std::string> end = ev.finish(StopReason::kMaxTokens, "", usage(12, 8, 2));
  EXPECT_EQ(names(end), (std::vector<std::string>{"content_block_stop", "message_delta", "message_stop"}));
  const json::value delta = event(end[1]).second;
  EXPECT_EQ(delta.at("delta"), json::parse(R"({"stop_reason": "max_tokens", "stop_sequence": null})"));
  EXPECT_EQ(delta.at("usage").at("output_tokens").to_number<uint64_t>(), 2u);
  EXPECT_EQ(delta.at("usage").at("input_tokens").to_number<uint64_t>(), 4u);
  EXPECT_EQ(delta.at("usage").at("cache_read_input_tokens").to_number<uint64_t>(), 8u);
}

TEST(StreamEvents, ToolUseClosesTheTextBlock) {
  MessageEvents ev({"m", "s"});
  ev.text("Let me look.");
  const std::vector<std::string> call = ev.call({"toolu_1", "f", R"({"x":1})"});
  EXPECT_EQ(names(call), (std::vector<std::string>{"content_block_stop", "content_block_start", "content_block_delta",
                                                   "content_block_stop"}));
  EXPECT_EQ(event(call[0]).second.at("index").as_int64(), 0);
  EXPECT_EQ(event(call[1]).second, json::parse(R"({"type": "content_block_start", "index": 1,
      "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}})"));
  EXPECT_EQ(event(call[2]).second, json::parse(R"({"type": "content_block_delta", "index": 1,
      "delta": {"type": "input_json_delta", "partial_json": "{\"x\":1}"}})"));
  EXPECT_EQ(ev.calls(), 1);
  const std::vector<std::string> end = ev.finish(StopReason::kToolUse, "", usage(1, 0, 1));
  EXPECT_EQ(names(end), (std::vector<std::string>{"message_delta", "message_stop"}));
  EXPECT_EQ(event(end[0]).second.at("delta").at("stop_reason").as_string(), "tool_use");
}

TEST(StreamEvents, NothingSaidIsOneEmptyTextBlock) {
  MessageEvents ev({"m", "s"});
  const std::vector<std::string> end = ev.finish(StopReason::kStopSequence, "END", usage(1, 0, 0));
  EXPECT_EQ(names(end), (std::vector<std::string>{"content_block_start", "content_block_stop", "message_delta",
                                                  "message_stop"}));
  EXPECT_EQ(event(end[2]).second.at("delta").at("stop_sequence").as_string(), "END");
}

TEST(ApiErrorShape, StatusesAndTypes) {
  const std::vector<std::tuple<int, int, std::string>> cases = {
      {400, 400, "invalid_request_error"}, {401, 401, "authentication_error"}, {403, 403, "permission_error"},
      {404, 404, "not_found_error"},       {413, 413, "request_too_large"},    {429, 429, "rate_limit_error"},
      {500, 500, "api_error"},             {503, 529, "overloaded_error"},     {405, 405, "invalid_request_error"}};
  for (const auto& [in, out, type] : cases) {
    const openai::ApiError e(in, "why", "whatever");
    EXPECT_EQ(error_status(e), out);
    EXPECT_EQ(error_json(e), json::parse(R"({"type": "error", "error": {"type": ")" + type + R"(", "message": "why"}})"));
  }
  const auto [name, data] = event(error_frame(openai::overloaded()));
  EXPECT_EQ(name, "error");
  EXPECT_EQ(data.at("error").at("type").as_string(), "overloaded_error");
}

}  // namespace
}  // namespace kvgate::anthropic
