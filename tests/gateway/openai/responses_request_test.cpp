// Responses API bodies: every accepted field and how it maps onto the chat
// machinery, the fields accepted only at the value that changes nothing,
// and every refusal naming its field.
#include "gateway/openai/responses_request.h"

#include <gtest/gtest.h>

#include "tests/gateway/openai/api_error_matchers.h"

namespace kvgate::openai {
namespace {

using testing::error_of;

// A valid body with `extra` ("\"k\": v, ...") added.
std::string body_with(const std::string& extra, const std::string& input = R"("hi")") {
  std::string b = R"({"model": "m", "input": )" + input + "}";
  if (!extra.empty()) b.insert(b.size() - 1, ", " + extra);
  return b;
}

// The 400 a body gets, naming `field` as its param and in its message.
void expect_refused(const std::string& body, const std::string& field) {
  const ApiError e = error_of([&] { parse_responses_request(body); });
  EXPECT_EQ(e.status, 400) << body;
  EXPECT_EQ(e.param, field) << body;
  EXPECT_NE(e.message.find(field), std::string::npos) << "'" << e.message << "' does not name " << field;
}

TEST(ResponsesRequest, MinimalBody) {
  const ResponsesRequest r = parse_responses_request(body_with(""));
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.input.size(), 1u);
  EXPECT_EQ(r.input[0], (ChatMessage{ChatRole::kUser, "hi", {}, {}}));
  EXPECT_FALSE(r.instructions);
  EXPECT_TRUE(r.previous_response_id.empty());
  EXPECT_TRUE(r.store);
  EXPECT_EQ(r.options, GenerationOptions{});
  EXPECT_TRUE(r.metadata.empty());
}

TEST(ResponsesRequest, EveryField) {
  const ResponsesRequest r = parse_responses_request(body_with(
      R"("instructions": "be brief", "previous_response_id": "resp_1", "store": false, "max_output_tokens": 8,
         "temperature": 0.5, "top_p": 0.9, "stream": true, "prompt_cache_key": "conv-7",
         "prompt_cache_retention": "in_memory", "metadata": {"k": "v"}, "user": "u-1",
         "parallel_tool_calls": false, "tools": [], "tool_choice": "none", "text": {"format": {"type": "text"}},
         "truncation": "disabled", "include": [], "background": false, "reasoning": null)"));
  EXPECT_EQ(r.instructions, "be brief");
  EXPECT_EQ(r.previous_response_id, "resp_1");
  EXPECT_FALSE(r.store);
  EXPECT_EQ(r.options.max_tokens, 8);
  EXPECT_EQ(r.options.temperature, 0.5f);
  EXPECT_EQ(r.options.top_p, 0.9f);
  EXPECT_TRUE(r.options.stream);
  EXPECT_EQ(r.options.prompt_cache_key, "conv-7");
  EXPECT_EQ(r.options.pin_ttl, std::chrono::seconds(300));
  EXPECT_EQ(r.options.user, "u-1");
  EXPECT_EQ(r.metadata.at("k"), "v");
}

TEST(ResponsesRequest, MessageItems) {
  const ResponsesRequest r = parse_responses_request(body_with("", R"([
      {"role": "developer", "content": "rules"},
      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"},
                                                      {"type": "input_text", "text": "b"}]},
      {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
       "content": [{"type": "output_text", "text": "said", "annotations": []}]},
      {"role": "system", "content": "more rules"}])"));
  ASSERT_EQ(r.input.size(), 4u);
  EXPECT_EQ(r.input[0], (ChatMessage{ChatRole::kSystem, "rules", {}, {}}));
  EXPECT_EQ(r.input[1], (ChatMessage{ChatRole::kUser, "a\nb", {}, {}}));
  EXPECT_EQ(r.input[2], (ChatMessage{ChatRole::kAssistant, "said", {}, {}}));
  EXPECT_EQ(r.input[3], (ChatMessage{ChatRole::kSystem, "more rules", {}, {}}));
}

TEST(ResponsesRequest, RefusesWhatChangesTheAnswer) {
  expect_refused(body_with(R"("tools": [{"type": "function", "name": "f"}])"), "tools");
  expect_refused(body_with(R"("tool_choice": "required")"), "tool_choice");
  expect_refused(body_with(R"("text": {"format": {"type": "json_object"}})"), "text.format.type");
  expect_refused(body_with(R"("text": {"format": {"type": "text"}, "verbosity": "low"})"), "text.verbosity");
  expect_refused(body_with(R"("reasoning": {"effort": "low"})"), "reasoning");
  expect_refused(body_with(R"("include": ["message.output_text.logprobs"])"), "include");
  expect_refused(body_with(R"("truncation": "auto")"), "truncation");
  expect_refused(body_with(R"("background": true)"), "background");
  expect_refused(body_with(R"("prompt": {"id": "p"})"), "prompt");
  expect_refused(body_with(R"("conversation": "c")"), "conversation");
  expect_refused(body_with(R"("top_logprobs": 2)"), "top_logprobs");
  expect_refused(body_with(R"("stream_options": {})"), "stream_options");
  expect_refused(body_with(R"("max_tool_calls": 1)"), "max_tool_calls");
  // Chat's fields are not the Responses API's: unknown, not silently read.
  expect_refused(body_with(R"("max_tokens": 5)"), "max_tokens");
  expect_refused(body_with(R"("stop": "x")"), "stop");
  expect_refused(body_with(R"("frobnicate": 1)"), "frobnicate");
  // A field with no name: refused, with no empty `param` (found by the fuzzer).
  const ApiError e = error_of([] { parse_responses_request(body_with(R"("": 1)")); });
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, std::nullopt);
  EXPECT_NE(e.message.find("empty name"), std::string::npos) << e.message;
}

TEST(ResponsesRequest, RefusesInputsItCannotServe) {
  expect_refused(body_with("", R"([{"type": "function_call_output", "call_id": "c", "output": "x"}])"), "input[0].type");
  expect_refused(body_with("", R"([{"type": "item_reference", "id": "msg_1"}])"), "input[0].type");
  expect_refused(body_with("", R"([{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}])"),
                 "input[0].content[0].type");
  expect_refused(body_with("", R"([{"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]}])"),
                 "input[0].content[0].type");
  expect_refused(body_with("", R"([{"role": "assistant", "content": [{"type": "input_text", "text": "x"}]}])"),
                 "input[0].content[0].type");
  expect_refused(body_with("", R"([{"role": "tool", "content": "x"}])"), "input[0].role");
  expect_refused(body_with("", R"([{"role": "user", "content": "x", "name": "n"}])"), "input[0].name");
  expect_refused(body_with("", R"([{"role": "user", "content": 5}])"), "input[0].content");
  expect_refused(body_with("", "[]"), "input");
  expect_refused(body_with("", "5"), "input");
  expect_refused(R"({"model": "m"})", "input");
  expect_refused(R"({"input": "hi"})", "model");
}

TEST(ResponsesRequest, RefusesBadValues) {
  expect_refused(body_with(R"("max_output_tokens": 0)"), "max_output_tokens");
  expect_refused(body_with(R"("max_output_tokens": "8")"), "max_output_tokens");
  expect_refused(body_with(R"("temperature": 3)"), "temperature");
  expect_refused(body_with(R"("top_p": 0)"), "top_p");
  expect_refused(body_with(R"("store": "yes")"), "store");
  expect_refused(body_with(R"("instructions": 1)"), "instructions");
  expect_refused(body_with(R"("previous_response_id": "")"), "previous_response_id");
  expect_refused(body_with(R"("previous_response_id": ")" + std::string(300, 'x') + "\""), "previous_response_id");
  expect_refused(body_with(R"("prompt_cache_retention": "forever")"), "prompt_cache_retention");
  expect_refused(body_with(R"("metadata": {"k": 1})"), "metadata.k");
  expect_refused(body_with(R"("metadata": [])"), "metadata");
}

}  // namespace
}  // namespace kvgate::openai
