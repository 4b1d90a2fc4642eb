// chat.completion and text_completion objects. Pure; any thread.
#include "gateway/openai/completion_response.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace kvgate::openai {
namespace json = boost::json;

namespace {

json::object head(const ResponseMeta& meta, std::string_view object) {
  json::object o;
  o["id"] = meta.id;
  o["object"] = object;
  o["created"] = meta.created;
  o["model"] = meta.model;
  return o;
}

}  // namespace

json::object tool_call_json(const ToolCall& call) {
  return json::object{{"id", call.id},
                      {"type", "function"},
                      {"function", json::object{{"name", call.name}, {"arguments", call.arguments}}}};
}

json::value chat_completion_response(const ResponseMeta& meta, std::string_view content, FinishReason finish,
                                     const UsageReport& usage, std::span<const ToolCall> calls) {
  json::object message;
  message["role"] = "assistant";
  if (calls.empty()) {
    message["content"] = content;
  } else {
    message["content"] = content.empty() ? json::value(nullptr) : json::value(content);
    json::array list;
    for (const ToolCall& c : calls) list.push_back(tool_call_json(c));
    message["tool_calls"] = std::move(list);
  }
  json::object choice;
  choice["index"] = 0;
  choice["message"] = std::move(message);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = calls.empty() ? finish_reason_text(finish) : std::string_view("tool_calls");

  json::object o = head(meta, "chat.completion");
  o["choices"] = json::array{std::move(choice)};
  o["usage"] = to_json(usage);
  return o;
}

json::value text_completion_response(const ResponseMeta& meta, std::string_view text, FinishReason finish,
                                     const UsageReport& usage) {
  json::object choice;
  choice["text"] = text;
  choice["index"] = 0;
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_reason_text(finish);

  json::object o = head(meta, "text_completion");
  o["choices"] = json::array{std::move(choice)};
  o["usage"] = to_json(usage);
  return o;
}

}  // namespace kvgate::openai
