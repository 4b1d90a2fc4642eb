// Anthropic's stream events. Pure; a MessageEvents belongs to one response.
#include "gateway/anthropic/stream_events.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "gateway/anthropic/api_error.h"

namespace kvgate::anthropic {
namespace json = boost::json;

std::string event_frame(std::string_view type, const json::value& data) {
  std::string f = "event: ";
  f.append(type).append("\ndata: ").append(json::serialize(data)).append("\n\n");
  return f;
}

std::string error_frame(const openai::ApiError& e) { return event_frame("error", error_json(e)); }

std::vector<std::string> MessageEvents::start(uint64_t prompt_tokens) const {
  const json::object usage{{"input_tokens", prompt_tokens},
                           {"cache_creation_input_tokens", 0},
                           {"cache_read_input_tokens", 0},
                           {"output_tokens", 0}};
  const json::object message{{"id", meta_.id},       {"type", "message"},       {"role", "assistant"},
                             {"model", meta_.model}, {"content", json::array()}, {"stop_reason", nullptr},
                             {"stop_sequence", nullptr}, {"usage", usage}};
  return {event_frame("message_start", {{"type", "message_start"}, {"message", message}}),
          event_frame("ping", {{"type", "ping"}})};
}

std::vector<std::string> MessageEvents::text(std::string_view text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  if (!text_open_) {
    out.push_back(event_frame("content_block_start", {{"type", "content_block_start"},
                                                      {"index", next_index_},
                                                      {"content_block", {{"type", "text"}, {"text", ""}}}}));
    text_open_ = true;
  }
  out.push_back(event_frame("content_block_delta", {{"type", "content_block_delta"},
                                                    {"index", next_index_},
                                                    {"delta", {{"type", "text_delta"}, {"text", text}}}}));
  return out;
}

void MessageEvents::close_text(std::vector<std::string>& out) {
  if (!text_open_) return;
  out.push_back(event_frame("content_block_stop", {{"type", "content_block_stop"}, {"index", next_index_}}));
  text_open_ = false;
  ++next_index_;
}

std::vector<std::string> MessageEvents::call(const openai::ToolCall& call) {
  std::vector<std::string> out;
  close_text(out);
  const int i = next_index_++;
  json::object block = tool_use_block(call);
  block["input"] = json::object();  // the input follows as JSON text, as Anthropic streams it
  out.push_back(event_frame("content_block_start",
                            {{"type", "content_block_start"}, {"index", i}, {"content_block", std::move(block)}}));
  out.push_back(event_frame("content_block_delta",
                            {{"type", "content_block_delta"},
                             {"index", i},
                             {"delta", {{"type", "input_json_delta"}, {"partial_json", call.arguments}}}}));
  out.push_back(event_frame("content_block_stop", {{"type", "content_block_stop"}, {"index", i}}));
  ++calls_;
  return out;
}

std::vector<std::string> MessageEvents::finish(StopReason stop, std::string_view stop_sequence,
                                               const openai::UsageReport& usage) {
  std::vector<std::string> out;
  if (next_index_ == 0 && !text_open_) {  // nothing was said: one empty text block, as the whole message has
    out.push_back(event_frame("content_block_start", {{"type", "content_block_start"},
                                                      {"index", 0},
                                                      {"content_block", {{"type", "text"}, {"text", ""}}}}));
    text_open_ = true;
  }
  close_text(out);
  const json::value seq = stop == StopReason::kStopSequence ? json::value(stop_sequence) : json::value(nullptr);
  out.push_back(event_frame("message_delta", {{"type", "message_delta"},
                                              {"delta", {{"stop_reason", stop_reason_name(stop)}, {"stop_sequence", seq}}},
                                              {"usage", usage_json(usage)}}));
  out.push_back(event_frame("message_stop", {{"type", "message_stop"}}));
  return out;
}

}  // namespace kvgate::anthropic
