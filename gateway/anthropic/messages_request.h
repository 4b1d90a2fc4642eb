// POST /v1/messages and /v1/messages/count_tokens: Anthropic's request, its
// anthropic-version header and its body, mapped onto the chat machinery the
// OpenAI routes use (openai/chat_message.h, chat_tools.h,
// generation_options.h), so both APIs render one chat template, read one
// tool-call syntax and run one pipeline.
//
//   model                 required, a non-empty string
//   max_tokens            required (not for count_tokens), an integer >= 1
//   system                a string or an array of text blocks (joined with "\n"): the first, system message
//   messages              required, non-empty: {role: "user" | "assistant", content: a string or blocks}
//     text blocks         {type: "text", text} (citations allowed, as they describe the text)
//     tool_use            (assistant) {type, id, name, input: an object}: a call the model made
//     tool_result         (user) {type, tool_use_id (an earlier tool_use's), content: a string or text blocks}:
//                         a tool message, in the order the blocks come
//   stop_sequences        at most kMaxStopSequences strings of at most openai::kMaxStopBytes bytes
//   temperature           [0, 1] (Anthropic's range), default 1
//   top_p                 (0, 1]; top_k: an integer >= 0 (0: off)
//   stream                boolean
//   metadata              {user_id}: recorded as the request's user, not interpreted
//   tools                 [{name, description?, input_schema, type?: "custom"}]
//   tool_choice           {type: "auto" | "any" (one call, to any tool) | "tool" (one call, to `name`) | "none",
//                         disable_parallel_tool_use?}
//   thinking              {type: "disabled"} only
//   service_tier          accepted and not interpreted: it picks capacity, not the answer
//
// Anything else is a 400 naming it, as Anthropic answers unknown fields
// ("Extra inputs are not permitted"), and with a reason where kvgate knows
// the field and does not serve it yet: cache_control (prompt-caching
// breakpoints; kvgate caches prefixes by itself), thinking enabled, image
// and document blocks, thinking blocks, a tool_result's is_error, tools of
// Anthropic's own (web search, bash, ...), a final assistant message
// (a prefill, which kvgate does not continue), mcp_servers, container.
// Errors are openai::ApiError (the message names the field by its JSON
// path); the route answers them in Anthropic's shape (api_error.h).
//
// Pure; any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/openai/chat_message.h"
#include "gateway/openai/chat_tools.h"
#include "gateway/openai/generation_options.h"

namespace kvgate::anthropic {

// The one version of the Messages API (and its stream events) kvgate speaks.
inline constexpr std::string_view kApiVersion = "2023-06-01";
// Stop sequences a request may send: Anthropic names no bound; matching
// costs each one pass over the text, so kvgate keeps one.
inline constexpr std::size_t kMaxStopSequences = 16;

// The anthropic-version header: required, as Anthropic requires it, and
// kApiVersion. Throws ApiError 400 naming the header otherwise.
void check_api_version(std::optional<std::string_view> header);

// The anthropic-beta header asks for behaviour kvgate does not have: a 400
// naming it (and the betas) when present.
void refuse_betas(std::optional<std::string_view> header);

struct MessagesRequest {
  std::string model;
  // The system message first (when given), then the turns; a user turn's
  // tool_result blocks are tool messages, its text a user message.
  std::vector<openai::ChatMessage> messages;
  // max_tokens, temperature, top_p, top_k, stop (stop_sequences), stream,
  // user (metadata.user_id); the rest at its default.
  openai::GenerationOptions options;
  std::optional<openai::ChatTools> tools;  // none: no tools offered
};

enum class Purpose { kCreate, kCountTokens };

// Throws ApiError (400, naming the field) for anything not accepted above;
// see openai/json_body.h for a body that is not a JSON object.
MessagesRequest parse_messages_request(std::string_view body, Purpose purpose);

}  // namespace kvgate::anthropic
