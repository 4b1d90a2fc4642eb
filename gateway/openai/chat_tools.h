// The tools a chat request offers the model: OpenAI's `tools` (function
// definitions with JSON-schema parameters), `tool_choice` and
// `parallel_tool_calls`, validated once, kept as the request sent them for
// the chat template to render.
//
// tool_choice "auto" (the default with tools), "none", "required" and a
// named function are served; the last two hold the model's output to a
// call in its own syntax by constrained decoding (structured_output.h). A
// function marked `strict` is served when the call is forced (the
// arguments are then held to its schema); with "auto" it is a 400 naming
// it, since a call the model chooses to make is not constrained yet.
//
// Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/json/array.hpp>

#include "gateway/openai/json_fields.h"

namespace kvgate::openai {

enum class ToolChoice { kAuto, kNone, kRequired, kNamed };

struct ChatTools {
  boost::json::array definitions;  // the request's `tools`, as sent: [{"type": "function", "function": {...}}]
  std::vector<std::string> names;  // the functions' names, in order
  ToolChoice choice = ToolChoice::kAuto;
  std::string named;  // kNamed: the function the call must name
  bool parallel = true;  // parallel_tool_calls
};

// None when the request offers no tools (absent or []). Throws ApiError 400
// naming the field for a malformed tool, a duplicate name, a tool_choice
// naming an absent function, or strict with tool_choice auto.
std::optional<ChatTools> parse_chat_tools(const FieldReader& body);

}  // namespace kvgate::openai
