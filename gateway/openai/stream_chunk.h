// The objects a streamed answer sends, each one SSE "data:" frame (the
// server frames them and ends the stream with "data: [DONE]").
//
// Chat (object "chat.completion.chunk"), in order:
//   1. the role:    "delta": {"role": "assistant", "content": ""}
//   2. the content: "delta": {"content": "..."}, one chunk per piece of text,
//      and tool calls, each as chat_tool_call_chunks() writes it;
//      the last one carries the finish_reason (null on the others). When the
//      request ends with no text left to send, chat_finish_chunk() carries it
//      with an empty delta, as OpenAI's own last chunk does.
// Completions (object "text_completion"): {"text": "...", "index": 0,
//   "logprobs": null, "finish_reason": null | "stop" | "length"} per piece.
// With stream_options.include_usage, every chunk above has "usage": null and
// a last chunk with "choices": [] and the usage follows the finish.
// A failure mid-stream is the ApiError's own JSON (api_error.h: to_json).
//
// Pure; any thread.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "engine/finish_reason.h"
#include "gateway/openai/chat_message.h"
#include "gateway/openai/generation_options.h"
#include "gateway/openai/response_meta.h"
#include "gateway/openai/usage_report.h"

namespace kvgate::openai {

struct StreamContext {
  ResponseMeta meta;
  bool include_usage = false;  // the request's stream_options.include_usage
};

boost::json::value chat_role_chunk(const StreamContext& s);
boost::json::value chat_content_chunk(const StreamContext& s, std::string_view text,
                                      std::optional<FinishReason> finish = std::nullopt);
boost::json::value chat_finish_chunk(const StreamContext& s, FinishReason finish);
// The last chunk of a reply that made tool calls: finish_reason "tool_calls".
boost::json::value chat_tool_calls_finish_chunk(const StreamContext& s);
// One tool call as OpenAI streams it: a chunk with "delta": {"tool_calls":
// [{"index", "id", "type", "function": {"name", "arguments": ""}}]}, then
// one with the arguments ({"index", "function": {"arguments": "..."}}).
std::vector<boost::json::value> chat_tool_call_chunks(const StreamContext& s, int index, const ToolCall& call);

boost::json::value text_chunk(const StreamContext& s, std::string_view text,
                              std::optional<FinishReason> finish = std::nullopt);

// The usage-only last chunk: "choices": [] and "usage": {...}; its object is
// "chat.completion.chunk" or "text_completion" by endpoint.
boost::json::value usage_chunk(const StreamContext& s, Endpoint endpoint, const UsageReport& usage);

}  // namespace kvgate::openai
