// The tools a chat request offers the model: OpenAI's `tools` (function
// definitions with JSON-schema parameters), `tool_choice` and
// `parallel_tool_calls`, validated once, kept as the request sent them for
// the chat template to render.
//
// tool_choice "auto" (the default with tools) and "none" are served;
// "required" and a named function need the model's output held to a schema,
// constrained decoding, which kvgate does not do yet: a 400 naming
// tool_choice, never an answer that ignored it. So is a function marked
// `strict`.
//
// Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/array.hpp>

#include "gateway/openai/json_fields.h"

namespace kvgate::openai {

enum class ToolChoice { kAuto, kNone };

struct ChatTools {
  boost::json::array definitions;  // the request's `tools`, as sent: [{"type": "function", "function": {...}}]
  std::vector<std::string> names;  // the functions' names, in order
  ToolChoice choice = ToolChoice::kAuto;
  bool parallel = true;  // parallel_tool_calls
};

// None when the request offers no tools (absent or []). Throws ApiError 400
// naming the field for a malformed tool, a duplicate name, or a
// tool_choice kvgate does not serve.
std::optional<ChatTools> parse_chat_tools(const FieldReader& body);

}  // namespace kvgate::openai
