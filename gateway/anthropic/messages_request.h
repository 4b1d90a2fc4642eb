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
//     text blocks         {type: "text", text, cache_control?} (citations allowed, as they describe the text)
//     tool_use            (assistant) {type, id, name, input: an object}: a call the model made
//     tool_result         (user) {type, tool_use_id (an earlier tool_use's), content: a string or text blocks}:
//                         a tool message, in the order the blocks come
//   stop_sequences        at most kMaxStopSequences strings of at most openai::kMaxStopBytes bytes
//   temperature           [0, 1] (Anthropic's range), default 1
//   top_p                 (0, 1]; top_k: an integer >= 0 (0: off)
//   stream                boolean
//   metadata              {user_id}: recorded as the request's user, not interpreted
//   tools                 [{name, description?, input_schema, type?: "custom", cache_control?}]
//   tool_choice           {type: "auto" | "any" (one call, to any tool) | "tool" (one call, to `name`) | "none",
//                         disable_parallel_tool_use?}
//   thinking              {type: "disabled"} only
//   service_tier          accepted and not interpreted: it picks capacity, not the answer
//
//   cache_control         on a tool, a system text block or a message's block (text, tool_use,
//                         tool_result): {type: "ephemeral", ttl?: "5m" (default) | "1h"}, at most
//                         kMaxBreakpoints in all, no 1h one after a 5m one, none on an empty text
//                         block: a CacheBreakpoint
//
// Anything else is a 400 naming it, as Anthropic answers unknown fields
// ("Extra inputs are not permitted"), and with a reason where kvgate knows
// the field and does not serve it yet: thinking enabled, image
// and document blocks, thinking blocks, a tool_result's is_error, tools of
// Anthropic's own (web search, bash, ...), a final assistant message
// (a prefill, which kvgate does not continue), mcp_servers, container.
// Errors are openai::ApiError (the message names the field by its JSON
// path); the route answers them in Anthropic's shape (api_error.h).
//
// Pure; any thread.
#pragma once

#include <chrono>
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
// cache_control breakpoints a request may mark, as Anthropic allows.
inline constexpr std::size_t kMaxBreakpoints = 4;

// The anthropic-version header: required, as Anthropic requires it, and
// kApiVersion. Throws ApiError 400 naming the header otherwise.
void check_api_version(std::optional<std::string_view> header);

// The anthropic-beta header asks for behaviour kvgate does not have: a 400
// naming it (and the betas) when present.
void refuse_betas(std::optional<std::string_view> header);

// A cache_control breakpoint: the prompt up to the end of the marked block
// is to be written to the cache and pinned for `ttl`. Where the block
// ends, as a cut of the request: its first `tools` tools and its first
// `messages` messages, the last of those cut to its first `content_bytes`
// bytes of content (npos: whole). A breakpoint on an assistant message's
// block, or inside a tool_result, ends after that whole message.
struct CacheBreakpoint {
  std::size_t tools = std::string::npos;  // npos: all
  std::size_t messages = 0;
  std::size_t content_bytes = std::string::npos;
  std::chrono::seconds ttl{300};
};

struct MessagesRequest {
  std::string model;
  // The system message first (when given), then the turns; a user turn's
  // tool_result blocks are tool messages, its text a user message.
  std::vector<openai::ChatMessage> messages;
  // max_tokens, temperature, top_p, top_k, stop (stop_sequences), stream,
  // user (metadata.user_id); the rest at its default.
  openai::GenerationOptions options;
  std::optional<openai::ChatTools> tools;  // none: no tools offered
  std::vector<CacheBreakpoint> breakpoints;  // in the request's order: tools, system, messages
};

enum class Purpose { kCreate, kCountTokens };

// Throws ApiError (400, naming the field) for anything not accepted above;
// see openai/json_body.h for a body that is not a JSON object.
MessagesRequest parse_messages_request(std::string_view body, Purpose purpose);

}  // namespace kvgate::anthropic
