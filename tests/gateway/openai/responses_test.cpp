// The answers' shapes, field by field: chat.completion, text_completion,
// the stream chunks in order, the usage-only chunk, usage with kvgate's
// extension, and the models list. Each is serialized and parsed back, so
// what is compared is what a client receives.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "gateway/openai/api_error.h"
#include "gateway/openai/completion_response.h"
#include "gateway/openai/model_list.h"
#include "gateway/openai/stream_chunk.h"
#include "gateway/openai/usage_report.h"

namespace kvgate::openai {
namespace {

namespace json = boost::json;

json::value wire(const json::value& v) { return json::parse(json::serialize(v)); }

std::vector<std::string> keys(const json::value& v) {
  std::vector<std::string> k;
  for (const auto& kv : v.as_object()) k.emplace_back(kv.key());
  return k;
}

UsageReport sample_usage() {
  UsageReport u;
  u.prompt_tokens = 40;
  u.completion_tokens = 5;
  u.cached_device_tokens = 32;
  u.fresh_prefill_tokens = 8;
  u.cache_written_tokens = 16;
  u.cost_micros = 123;
  return u;
}

const ResponseMeta kChatMeta{chat_completion_id("abc123"), 1700000000, "stories260K"};
const ResponseMeta kTextMeta{text_completion_id("xyz"), 1700000001, "stories260K"};

TEST(Responses, Ids) {
  EXPECT_EQ(chat_completion_id("abc"), "chatcmpl-abc");
  EXPECT_EQ(text_completion_id("abc"), "cmpl-abc");
  EXPECT_EQ(finish_reason_text(FinishReason::kStop), "stop");
  EXPECT_EQ(finish_reason_text(FinishReason::kLength), "length");
}

TEST(Responses, UsageHasOpenAisFieldsAndKvgatesExtension) {
  const UsageReport u = sample_usage();
  EXPECT_TRUE(u.balanced());
  const json::value v = wire(to_json(u));
  EXPECT_EQ(keys(v), (std::vector<std::string>{"prompt_tokens", "completion_tokens", "total_tokens",
                                               "prompt_tokens_details", "kvgate"}));
  EXPECT_EQ(v.at("prompt_tokens"), 40);
  EXPECT_EQ(v.at("completion_tokens"), 5);
  EXPECT_EQ(v.at("total_tokens"), 45);
  EXPECT_EQ(v.at("prompt_tokens_details"), json::parse(R"({"cached_tokens": 32})"));
  EXPECT_EQ(v.at("kvgate"), json::parse(R"({"cached_tokens_by_tier": {"device": 32, "host": 0, "disk": 0},
                                            "fresh_prefill_tokens": 8, "cache_written_tokens": 16,
                                            "cost_micros": 123, "currency": "USD"})"));
}

TEST(Responses, UsageCountsEveryTierAsCached) {
  UsageReport u;
  u.prompt_tokens = 100;
  u.cached_device_tokens = 10;
  u.cached_host_tokens = 20;
  u.cached_disk_tokens = 30;
  u.fresh_prefill_tokens = 40;
  EXPECT_TRUE(u.balanced());
  EXPECT_EQ(wire(to_json(u)).at("prompt_tokens_details").at("cached_tokens"), 60);
  u.fresh_prefill_tokens = 41;
  EXPECT_FALSE(u.balanced());
}

TEST(Responses, ChatCompletionObject) {
  const json::value v = wire(chat_completion_response(kChatMeta, "Hello there", FinishReason::kStop, sample_usage()));
  EXPECT_EQ(keys(v), (std::vector<std::string>{"id", "object", "created", "model", "choices", "usage"}));
  EXPECT_EQ(v.at("id"), "chatcmpl-abc123");
  EXPECT_EQ(v.at("object"), "chat.completion");
  EXPECT_EQ(v.at("created"), 1700000000);
  EXPECT_EQ(v.at("model"), "stories260K");
  ASSERT_EQ(v.at("choices").as_array().size(), 1u);
  EXPECT_EQ(v.at("choices").at(0), json::parse(R"({"index": 0, "message": {"role": "assistant",
                                                   "content": "Hello there"}, "logprobs": null,
                                                   "finish_reason": "stop"})"));
  EXPECT_EQ(v.at("usage"), wire(to_json(sample_usage())));
}

TEST(Responses, TextCompletionObject) {
  const json::value v = wire(text_completion_response(kTextMeta, " upon a time", FinishReason::kLength, sample_usage()));
  EXPECT_EQ(keys(v), (std::vector<std::string>{"id", "object", "created", "model", "choices", "usage"}));
  EXPECT_EQ(v.at("id"), "cmpl-xyz");
  EXPECT_EQ(v.at("object"), "text_completion");
  EXPECT_EQ(v.at("created"), 1700000001);
  EXPECT_EQ(v.at("choices"), json::parse(R"([{"text": " upon a time", "index": 0, "logprobs": null,
                                               "finish_reason": "length"}])"));
  EXPECT_EQ(v.at("usage").at("total_tokens"), 45);
}

TEST(Responses, ChatStreamInOrder) {
  const StreamContext s{kChatMeta, false};
  const json::value role = wire(chat_role_chunk(s));
  EXPECT_EQ(keys(role), (std::vector<std::string>{"id", "object", "created", "model", "choices"}));
  EXPECT_EQ(role.at("object"), "chat.completion.chunk");
  EXPECT_EQ(role.at("id"), "chatcmpl-abc123");
  EXPECT_EQ(role.at("choices"), json::parse(R"([{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                 "logprobs": null, "finish_reason": null}])"));
  const json::value mid = wire(chat_content_chunk(s, "Hel"));
  EXPECT_EQ(mid.at("choices"), json::parse(R"([{"index": 0, "delta": {"content": "Hel"}, "logprobs": null,
                                                "finish_reason": null}])"));
  const json::value last = wire(chat_content_chunk(s, "lo", FinishReason::kLength));
  EXPECT_EQ(last.at("choices").at(0).at("delta"), json::parse(R"({"content": "lo"})"));
  EXPECT_EQ(last.at("choices").at(0).at("finish_reason"), "length");
  const json::value fin = wire(chat_finish_chunk(s, FinishReason::kStop));
  EXPECT_EQ(fin.at("choices"), json::parse(R"([{"index": 0, "delta": {}, "logprobs": null,
                                                "finish_reason": "stop"}])"));
}

TEST(Responses, TextStreamChunks) {
  const StreamContext s{kTextMeta, false};
  const json::value c = wire(text_chunk(s, "Once"));
  EXPECT_EQ(keys(c), (std::vector<std::string>{"id", "object", "created", "model", "choices"}));
  EXPECT_EQ(c.at("object"), "text_completion");
  EXPECT_EQ(c.at("choices"), json::parse(R"([{"text": "Once", "index": 0, "logprobs": null,
                                              "finish_reason": null}])"));
  EXPECT_EQ(wire(text_chunk(s, "", FinishReason::kStop)).at("choices").at(0).at("finish_reason"), "stop");
}

TEST(Responses, IncludeUsageNullsUsageOnEveryChunkThenSendsIt) {
  const StreamContext s{kChatMeta, true};
  for (const json::value& c : {wire(chat_role_chunk(s)), wire(chat_content_chunk(s, "x")),
                               wire(chat_finish_chunk(s, FinishReason::kStop)), wire(text_chunk(s, "y"))}) {
    ASSERT_TRUE(c.as_object().contains("usage"));
    EXPECT_TRUE(c.at("usage").is_null());
  }
  const json::value chat_usage = wire(usage_chunk(s, Endpoint::kChatCompletions, sample_usage()));
  EXPECT_EQ(keys(chat_usage), (std::vector<std::string>{"id", "object", "created", "model", "choices", "usage"}));
  EXPECT_EQ(chat_usage.at("object"), "chat.completion.chunk");
  EXPECT_TRUE(chat_usage.at("choices").as_array().empty());
  EXPECT_EQ(chat_usage.at("usage"), wire(to_json(sample_usage())));
  const json::value text_usage = wire(usage_chunk(StreamContext{kTextMeta, true}, Endpoint::kCompletions,
                                                  sample_usage()));
  EXPECT_EQ(text_usage.at("object"), "text_completion");
  EXPECT_EQ(text_usage.at("id"), "cmpl-xyz");
  EXPECT_TRUE(text_usage.at("choices").as_array().empty());
}

TEST(Responses, MidStreamErrorFrameIsTheErrorObject) {
  const json::value v = wire(to_json(internal_error("the engine failed")));
  EXPECT_EQ(v, json::parse(R"({"error": {"message": "the engine failed", "type": "server_error", "param": null,
                                         "code": "internal_error"}})"));
}

TEST(Responses, ModelList) {
  const std::vector<ModelCard> models = {{"stories260K", 1700000000, "kvgate"}, {"other", 5, "kvgate"}};
  const json::value v = wire(model_list(models));
  EXPECT_EQ(v, json::parse(R"({"object": "list", "data": [
      {"id": "stories260K", "object": "model", "created": 1700000000, "owned_by": "kvgate"},
      {"id": "other", "object": "model", "created": 5, "owned_by": "kvgate"}]})"));
  EXPECT_EQ(wire(model_list({})), json::parse(R"({"object": "list", "data": []})"));
  EXPECT_EQ(wire(model_object(models[0])).at("owned_by"), "kvgate");
}

TEST(Responses, TextIsEscapedForTheWire) {
  const std::string tricky = "quote \" backslash \\ newline \n nul " + std::string(1, '\0') + " é";
  const json::value v = wire(chat_content_chunk(StreamContext{kChatMeta, false}, tricky));
  EXPECT_EQ(v.at("choices").at(0).at("delta").at("content").as_string(), tricky);
}

}  // namespace
}  // namespace kvgate::openai
