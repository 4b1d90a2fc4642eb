// The Responses API's response object, as POST /v1/responses answers it,
// GET /v1/responses/{id} returns it and its stream's events carry it:
//
//   {"id": "resp_...", "object": "response", "created_at", "status", "error",
//    "incomplete_details", "instructions", "max_output_tokens", "model",
//    "output": [{"type": "message", "id": "msg_...", "status", "role": "assistant",
//                "content": [{"type": "output_text", "text", "annotations": []}]}],
//    "parallel_tool_calls": true, "previous_response_id", "reasoning": {"effort": null, "summary": null},
//    "store", "temperature", "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [],
//    "top_p", "truncation": "disabled", "usage", "user", "metadata"}
//
// status: "in_progress" (the stream's first events: no output, usage null),
// "completed", "incomplete" (max_output_tokens reached:
// incomplete_details {"reason": "max_output_tokens"}), "failed" (error
// {"code": "server_error", "message"}).
//
// usage in the Responses shape, from the numbers the ledger recorded, with
// kvgate's extension object as chat's usage has it (usage_report.h):
//   {"input_tokens", "input_tokens_details": {"cached_tokens"},
//    "output_tokens", "output_tokens_details": {"reasoning_tokens": 0},
//    "total_tokens", "kvgate": {...}}
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "engine/finish_reason.h"
#include "gateway/openai/api_error.h"
#include "gateway/openai/usage_report.h"

namespace kvgate::openai {

std::string response_id(std::string_view unique);          // "resp_" + unique
std::string response_message_id(std::string_view unique);  // "msg_" + unique

// What a response says of itself, fixed when it starts.
struct ResponseSettings {
  std::string id;
  std::string message_id;
  int64_t created_at = 0;  // Unix seconds
  std::string model;
  std::optional<std::string> instructions;
  std::string previous_response_id;  // empty: none
  bool store = true;
  std::optional<int32_t> max_output_tokens;
  float temperature = 1.0f;
  float top_p = 1.0f;
  std::string user;
  boost::json::object metadata;
};

enum class ResponseStatus { kInProgress, kCompleted, kIncomplete, kFailed };

std::string_view response_status_name(ResponseStatus s);
// A finished request's status: kLength is incomplete, the rest completed.
ResponseStatus finished_status(FinishReason finish);

boost::json::object responses_usage(const UsageReport& u);

// The output message, `text` all it said so far.
boost::json::object response_message(const ResponseSettings& s, ResponseStatus status, std::string_view text);

// The whole object. `usage` for a finished response (null otherwise);
// `error` for a failed one. An in-progress one has no output.
boost::json::object response_object(const ResponseSettings& s, ResponseStatus status, std::string_view text,
                                    const UsageReport* usage = nullptr, const ApiError* error = nullptr);

// DELETE's answer: {"id", "object": "response", "deleted": true}.
boost::json::object response_deleted(std::string_view id);

}  // namespace kvgate::openai
