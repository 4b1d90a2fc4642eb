// Streamed chunks. Pure; any thread.
#include "gateway/openai/stream_chunk.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace kvgate::openai {
namespace json = boost::json;

namespace {

constexpr std::string_view kChatChunk = "chat.completion.chunk";
constexpr std::string_view kTextChunk = "text_completion";

json::value finish_value(std::optional<FinishReason> finish) {
  return finish ? json::value(finish_reason_text(*finish)) : json::value(nullptr);
}

json::object chunk(const StreamContext& s, std::string_view object, json::array choices) {
  json::object o;
  o["id"] = s.meta.id;
  o["object"] = object;
  o["created"] = s.meta.created;
  o["model"] = s.meta.model;
  o["choices"] = std::move(choices);
  if (s.include_usage) o["usage"] = nullptr;
  return o;
}

json::value chat_chunk(const StreamContext& s, json::object delta, std::optional<FinishReason> finish) {
  json::object choice;
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_value(finish);
  return chunk(s, kChatChunk, json::array{std::move(choice)});
}

}  // namespace

json::value chat_role_chunk(const StreamContext& s) {
  json::object delta;
  delta["role"] = "assistant";
  delta["content"] = "";
  return chat_chunk(s, std::move(delta), std::nullopt);
}

json::value chat_content_chunk(const StreamContext& s, std::string_view text, std::optional<FinishReason> finish) {
  json::object delta;
  delta["content"] = text;
  return chat_chunk(s, std::move(delta), finish);
}

json::value chat_finish_chunk(const StreamContext& s, FinishReason finish) {
  return chat_chunk(s, json::object(), finish);
}

json::value chat_tool_calls_finish_chunk(const StreamContext& s) {
  json::value c = chat_chunk(s, json::object(), std::nullopt);
  c.at("choices").at(0).at("finish_reason") = "tool_calls";
  return c;
}

std::vector<json::value> chat_tool_call_chunks(const StreamContext& s, int index, const ToolCall& call) {
  json::object head{{"index", index},
                    {"id", call.id},
                    {"type", "function"},
                    {"function", json::object{{"name", call.name}, {"arguments", ""}}}};
  json::object args{{"index", index}, {"function", json::object{{"arguments", call.arguments}}}};
  std::vector<json::value> out;
  out.push_back(chat_chunk(s, json::object{{"tool_calls", json::array{std::move(head)}}}, std::nullopt));
  out.push_back(chat_chunk(s, json::object{{"tool_calls", json::array{std::move(args)}}}, std::nullopt));
  return out;
}

json::value text_chunk(const StreamContext& s, std::string_view text, std::optional<FinishReason> finish) {
  json::object choice;
  choice["text"] = text;
  choice["index"] = 0;
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_value(finish);
  return chunk(s, kTextChunk, json::array{std::move(choice)});
}

json::value usage_chunk(const StreamContext& s, Endpoint endpoint, const UsageReport& usage) {
  json::object o = chunk(s, endpoint == Endpoint::kChatCompletions ? kChatChunk : kTextChunk, json::array());
  o["usage"] = to_json(usage);
  return o;
}

}  // namespace kvgate::openai
