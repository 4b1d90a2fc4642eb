// The response object. Pure; any thread.
#include "gateway/openai/responses_object.h"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

namespace kvgate::openai {
namespace json = boost::json;

std::string response_id(std::string_view unique) {
  std::string id = "resp_";
  id.append(unique);
  return id;
}

std::string response_message_id(std::string_view unique) {
  std::string id = "msg_";
  id.append(unique);
  return id;
}

std::string_view response_status_name(ResponseStatus s) {
  switch (s) {
    case ResponseStatus::kInProgress: return "in_progress";
    case ResponseStatus::kCompleted: return "completed";
    case ResponseStatus::kIncomplete: return "incomplete";
    case ResponseStatus::kFailed: return "failed";
  }
  return "failed";
}

ResponseStatus finished_status(FinishReason finish) {
  return finish == FinishReason::kLength ? ResponseStatus::kIncomplete : ResponseStatus::kCompleted;
}

json::object responses_usage(const UsageReport& u) {
  json::object report = to_json(u).as_object();
  json::object o;
  o["input_tokens"] = u.prompt_tokens;
  o["input_tokens_details"] = json::object{{"cached_tokens", u.cached_tokens()}};
  o["output_tokens"] = u.completion_tokens;
  o["output_tokens_details"] = json::object{{"reasoning_tokens", 0}};
  o["total_tokens"] = u.total_tokens();
  o["kvgate"] = std::move(report["kvgate"]);
  return o;
}

json::object response_message(const ResponseSettings& s, ResponseStatus status, std::string_view text) {
  json::array content;
  // An item still in progress has no part yet, as OpenAI's output_item.added.
  if (status != ResponseStatus::kInProgress)
    content.push_back(json::object{{"type", "output_text"}, {"text", text}, {"annotations", json::array()}});
  return {{"type", "message"},
          {"id", s.message_id},
          {"status", response_status_name(status)},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

json::object response_object(const ResponseSettings& s, ResponseStatus status, std::string_view text,
                             const UsageReport* usage, const ApiError* error) {
  json::array output;
  if (status == ResponseStatus::kCompleted || status == ResponseStatus::kIncomplete)
    output.push_back(response_message(s, status, text));
  json::value incomplete;
  if (status == ResponseStatus::kIncomplete) incomplete = json::object{{"reason", "max_output_tokens"}};
  json::value err;
  if (error) err = json::object{{"code", "server_error"}, {"message", error->message}};
  json::value instructions;
  if (s.instructions) instructions = *s.instructions;
  json::value max_output;
  if (s.max_output_tokens) max_output = *s.max_output_tokens;
  json::value previous;
  if (!s.previous_response_id.empty()) previous = s.previous_response_id;
  json::value user;
  if (!s.user.empty()) user = s.user;
  json::value used;
  if (usage) used = responses_usage(*usage);
  return {{"id", s.id},
          {"object", "response"},
          {"created_at", s.created_at},
          {"status", response_status_name(status)},
          {"error", std::move(err)},
          {"incomplete_details", std::move(incomplete)},
          {"instructions", std::move(instructions)},
          {"max_output_tokens", std::move(max_output)},
          {"model", s.model},
          {"output", std::move(output)},
          {"parallel_tool_calls", true},
          {"previous_response_id", std::move(previous)},
          {"reasoning", json::object{{"effort", nullptr}, {"summary", nullptr}}},
          {"store", s.store},
          {"temperature", s.temperature},
          {"text", json::object{{"format", json::object{{"type", "text"}}}}},
          {"tool_choice", "auto"},
          {"tools", json::array()},
          {"top_p", s.top_p},
          {"truncation", "disabled"},
          {"usage", std::move(used)},
          {"user", std::move(user)},
          {"metadata", s.metadata}};
}

json::object response_deleted(std::string_view id) {
  return {{"id", id}, {"object", "response"}, {"deleted", true}};
}

}  // namespace kvgate::openai
