// POST /v1/responses: OpenAI's Responses API request, mapped onto the chat
// machinery the other routes use (chat_message.h, generation_options.h), so
// it renders the one chat template and runs the one pipeline.
//
//   model                   required, a non-empty string
//   input                   required: a string (one user message) or a non-empty array of message items
//     message items         {type?: "message", role: "user" | "system" | "developer" | "assistant",
//                           content: a string or parts, id?, status?}; parts are
//                           {type: "input_text", text} (user, system, developer) or
//                           {type: "output_text", text, annotations?} (assistant), joined with "\n"
//   instructions            a string: a system message before the input, for this request only
//   previous_response_id    a stored response this request continues (the route rebuilds it)
//   store                   boolean, default true: keep the response for GET and previous_response_id
//   max_output_tokens       an integer >= 1 (OpenAI asks for >= 16; kvgate takes any)
//   temperature, top_p      as chat completions' ([0, 2], (0, 1])
//   stream                  boolean: the answer as the Responses API's events
//   prompt_cache_key        as chat completions': a route front's placement hint
//   prompt_cache_retention  "in_memory" or "24h": pins the prompt's prefix, as chat completions'
//   metadata                up to 16 string values (keys up to 64 bytes, values up to 512): echoed
//   user                    recorded, not interpreted
//   parallel_tool_calls     a boolean; with no tools it changes nothing
//   and, only at the value that changes nothing: tools [], tool_choice "auto" or
//   "none", text {format: {type: "text"}}, truncation "disabled", include [],
//   background false, reasoning null.
//
// Anything else is a 400 naming it, never ignored: tools, a tool_choice
// that forces one, a text format other than plain text (json_schema,
// json_object), reasoning, include, truncation "auto", background, prompt
// templates, conversations, items other than messages (function calls and
// their outputs, reasoning, item references), and parts other than text
// (images, files, audio, refusals), each with the reason; an unknown field
// is OpenAI's unknown_parameter.
//
// Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "gateway/openai/chat_message.h"
#include "gateway/openai/generation_options.h"

namespace kvgate::openai {

inline constexpr std::size_t kMaxResponseIdBytes = 256;
inline constexpr std::size_t kMaxMetadataPairs = 16;

struct ResponsesRequest {
  std::string model;
  std::optional<std::string> instructions;
  std::vector<ChatMessage> input;    // this turn's messages, in order, without the instructions
  std::string previous_response_id;  // empty: none
  bool store = true;
  // max_tokens (from max_output_tokens), temperature, top_p, stream, user,
  // prompt_cache_key, pin_ttl; the rest at its default.
  GenerationOptions options;
  boost::json::object metadata;
};

// Throws ApiError (400, naming the field) for anything not accepted above;
// see json_body.h for a body that is not a JSON object.
ResponsesRequest parse_responses_request(std::string_view body);

}  // namespace kvgate::openai
