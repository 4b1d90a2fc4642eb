// The message object and its usage. Pure; any thread.
#include "gateway/anthropic/message_response.h"

#include <boost/json/array.hpp>
#include <boost/json/parse.hpp>

namespace kvgate::anthropic {
namespace json = boost::json;

std::string message_id(std::string_view unique) { return "msg_" + std::string(unique); }

std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kEndTurn: return "end_turn";
    case StopReason::kMaxTokens: return "max_tokens";
    case StopReason::kStopSequence: return "stop_sequence";
    case StopReason::kToolUse: return "tool_use";
  }
  return "end_turn";
}

StopReason stop_reason(FinishReason finish, std::string_view stop_sequence, bool made_calls) {
  if (made_calls) return StopReason::kToolUse;
  if (!stop_sequence.empty()) return StopReason::kStopSequence;
  return finish == FinishReason::kLength ? StopReason::kMaxTokens : StopReason::kEndTurn;
}

json::object usage_json(const openai::UsageReport& u) {
  json::object out;
  out["input_tokens"] = u.prompt_tokens - u.cached_tokens() - u.pin_written_tokens();
  out["cache_creation_input_tokens"] = u.pin_written_tokens();
  out["cache_read_input_tokens"] = u.cached_tokens();
  out["cache_creation"] = json::object{{"ephemeral_5m_input_tokens", u.cache_write_5m_tokens},
                                       {"ephemeral_1h_input_tokens", u.cache_write_1h_tokens}};
  out["output_tokens"] = u.completion_tokens;
  out["kvgate"] = openai::to_json(u).as_object().at("kvgate");
  return out;
}

json::object tool_use_block(const openai::ToolCall& call) {
  // The parser gives only calls whose arguments are an object's JSON.
  json::value input = json::parse(call.arguments);
  return {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", std::move(input)}};
}

json::value message_response(const MessageMeta& meta, std::string_view text, std::span<const openai::ToolCall> calls,
                             StopReason stop, std::string_view stop_sequence, const openai::UsageReport& usage) {
  json::array content;
  if (!text.empty() || calls.empty()) content.push_back({{"type", "text"}, {"text", text}});
  for (const openai::ToolCall& c : calls) content.push_back(tool_use_block(c));
  return {{"id", meta.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", meta.model},
          {"content", std::move(content)},
          {"stop_reason", stop_reason_name(stop)},
          {"stop_sequence", stop == StopReason::kStopSequence ? json::value(stop_sequence) : json::value(nullptr)},
          {"usage", usage_json(usage)}};
}

json::value count_tokens_response(std::size_t prompt_tokens) { return {{"input_tokens", prompt_tokens}}; }

}  // namespace kvgate::anthropic
