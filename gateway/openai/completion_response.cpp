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

json::value chat_completion_response(const ResponseMeta& meta, std::string_view content, FinishReason finish,
                                     const UsageReport& usage) {
  json::object message;
  message["role"] = "assistant";
  message["content"] = content;
  json::object choice;
  choice["index"] = 0;
  choice["message"] = std::move(message);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_reason_text(finish);

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
