// The non-streaming answers: a chat.completion and a text_completion
// object, each with one choice (index 0) and the request's usage.
//
//   {"id": "chatcmpl-...", "object": "chat.completion", "created": T, "model": M,
//    "choices": [{"index": 0, "message": {"role": "assistant", "content": "..."},
//                 "logprobs": null, "finish_reason": "stop"}],
//    "usage": {...}}
//   with tool calls: "message": {"role": "assistant", "content": null,
//     "tool_calls": [{"id": "call_...", "type": "function", "function":
//     {"name": "f", "arguments": "{...}"}}]}, "finish_reason": "tool_calls"
//   {"id": "cmpl-...", "object": "text_completion", "created": T, "model": M,
//    "choices": [{"text": "...", "index": 0, "logprobs": null, "finish_reason": "length"}],
//    "usage": {...}}
//
// Pure; any thread.
#pragma once

#include <span>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "engine/finish_reason.h"
#include "gateway/openai/chat_message.h"
#include "gateway/openai/response_meta.h"
#include "gateway/openai/usage_report.h"

namespace kvgate::openai {

// With `calls` (tool calls the reply made): message.tool_calls, content
// null when empty, and finish_reason "tool_calls".
boost::json::value chat_completion_response(const ResponseMeta& meta, std::string_view content, FinishReason finish,
                                            const UsageReport& usage, std::span<const ToolCall> calls = {});

// OpenAI's {"id", "type": "function", "function": {"name", "arguments"}}.
boost::json::object tool_call_json(const ToolCall& call);

boost::json::value text_completion_response(const ResponseMeta& meta, std::string_view text, FinishReason finish,
                                            const UsageReport& usage);

}  // namespace kvgate::openai
