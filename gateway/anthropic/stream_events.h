// A streamed message as Anthropic's server-sent events, each frame
// "event: <type>\ndata: <json>\n\n" with the type repeated in the JSON:
//
//   message_start         {"message": the message with empty content, stop_reason null, and usage}
//   ping                  right after it, as Anthropic sends one
//   content_block_start   {"index", "content_block": {"type": "text", "text": ""}
//                                                  | {"type": "tool_use", "id", "name", "input": {}}}
//   content_block_delta   {"index", "delta": {"type": "text_delta", "text"}
//                                          | {"type": "input_json_delta", "partial_json"}}
//   content_block_stop    {"index"}
//   message_delta         {"delta": {"stop_reason", "stop_sequence"}, "usage": the final usage}
//   message_stop
//   error                 {"type": "error", "error": {...}} (api_error.h), instead of the end, on a failure
//
// Usage: message_start is sent when the request is admitted, before the
// cache lookup has said how much of the prompt it holds, so its usage
// counts the whole prompt as input_tokens (cache_read_input_tokens 0,
// output_tokens 0); message_delta carries the final usage, every counter
// (input_tokens, cache_read_input_tokens, ... as message_response.h), which
// Anthropic's SDKs take over message_start's. The final one is the ledger's.
//
// MessageEvents orders the blocks: a text block opens at the first text
// and closes before a tool_use block; a call arrives whole (the tool-call
// parser gives it once it has closed) and is sent as one input_json_delta;
// a reply with no block at all gets one empty text block, as the whole
// message has.
//
// Pure; a MessageEvents belongs to one response.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "gateway/anthropic/message_response.h"
#include "gateway/openai/api_error.h"
#include "gateway/openai/chat_message.h"
#include "gateway/openai/usage_report.h"

namespace kvgate::anthropic {

// "event: <type>\ndata: <json>\n\n".
std::string event_frame(std::string_view type, const boost::json::value& data);
// The error event for a failure mid-stream.
std::string error_frame(const openai::ApiError& e);

class MessageEvents {
 public:
  explicit MessageEvents(MessageMeta meta) : meta_(std::move(meta)) {}

  // message_start (the whole prompt as input_tokens) and a ping.
  std::vector<std::string> start(uint64_t prompt_tokens) const;
  // Text: the text block's start if it is not open, then a text_delta.
  std::vector<std::string> text(std::string_view text);
  // A whole call: closes an open text block, then the tool_use block.
  std::vector<std::string> call(const openai::ToolCall& call);
  // Closes what is open (or sends an empty text block), then message_delta
  // and message_stop.
  std::vector<std::string> finish(StopReason stop, std::string_view stop_sequence, const openai::UsageReport& usage);

  int calls() const { return calls_; }

 private:
  void close_text(std::vector<std::string>& out);

  MessageMeta meta_;
  int next_index_ = 0;   // the index of the next block
  bool text_open_ = false;
  int calls_ = 0;
};

}  // namespace kvgate::anthropic
