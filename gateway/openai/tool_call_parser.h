// A model's reply read for the tool calls it makes, in the syntax its own
// chat template taught it, as vLLM's and llama.cpp's tool parsers read them:
//
//   hermes   (Qwen 2.5, Qwen 3, Hermes 2/3; templates writing <tool_call>):
//            text, then one or more
//            <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
//   llama3   (Llama 3.1 to 3.3): the whole reply is one JSON object,
//            {"name": "f", "parameters": {...}}, maybe after <|python_tag|>
//   mistral  (Mistral's templates writing [TOOL_CALLS]): text, then either
//            [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]  (Nemo)
//            or, once per call,
//            [TOOL_CALLS]f[ARGS]{...}  (Devstral, Ministral 3, Magistral;
//            Small 3.2 writes [TOOL_CALLS]f[CALL_ID]id[ARGS]{...})
//   deepseek (DeepSeek V3, R1 and V3.1): text, then
//            <｜tool▁calls▁begin｜>, one or more calls, <｜tool▁calls▁end｜>;
//            a call is <｜tool▁call▁begin｜>function<｜tool▁sep｜>f
//            ```json {...} ```<｜tool▁call▁end｜> (V3, R1) or
//            <｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜> (V3.1)
//   generic  (kvgate's tool prompt, for templates with no tools: see
//            chat_template.h): the whole reply is {"name": "f", "arguments": {...}}
//
// Other templates that render tools (DeepSeek V3.2's DSML, gpt-oss's
// harmony, ...) write calls kvgate does not read yet: such a model's
// requests with tools are refused (kUnread) rather than answered with its
// call markup as text.
//
// Markers: Mistral's, DeepSeek's and <|python_tag|> are control tokens of
// their vocabularies, which decode to nothing; serving shows these tokens
// (tool_call_markers) to the parser as their text for requests with tools
// only, as llama.cpp's server keeps a format's "preserved tokens". So the
// parser removes them from whatever it gives as content, a reply that is
// not a call included: a client never sees them, with tools or without.
//
// A reply is all calls or all text: a call that does not parse (bad JSON,
// no name, a name the request did not offer, an unclosed <tool_call>) makes
// the whole reply text, never half a call. The streaming reader holds back
// only what may still become a call (a tail that could begin "<tool_call>",
// a reply that opened with "{"), so text reaches the client as it comes,
// and gives each call whole once it closes.
//
// Pure values; a ToolCallStream belongs to one response.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gateway/openai/chat_message.h"

namespace kvgate::openai {

enum class ToolCallFormat { kUnread, kHermes, kLlama3, kMistral, kDeepSeek, kGeneric };

// "unread", "hermes", "llama3", "mistral", "deepseek", "generic".
std::string_view tool_call_format_name(ToolCallFormat f);
// The format a name above names, for the config's tool_call_parser; none
// for another name, and for "unread" (no one asks for that).
std::optional<ToolCallFormat> tool_call_format_named(std::string_view name);
// The control tokens f's calls are written with, as text: what serving
// decodes as text for a request with tools (empty: none).
std::span<const std::string_view> tool_call_markers(ToolCallFormat f);

// What a reply is: its text and the calls it made. `unparsed`: it looked
// like a call (it opened one) but was not one, so it is all text.
struct ToolReply {
  std::string content;
  std::vector<ToolCall> calls;
  bool unparsed = false;
};

// How the calls are named: ids `<id_prefix><n>` (n from 0, in order;
// Mistral's are not: see tool_call_id), names checked against the
// request's functions.
struct ToolCallContext {
  ToolCallFormat format = ToolCallFormat::kGeneric;
  std::string id_prefix;             // "call_<request id>_"
  std::vector<std::string> names;    // the functions offered
  bool parallel = true;              // parallel_tool_calls: false keeps a reply's first call only
};

// The id of a reply's call n.
std::string tool_call_id(const ToolCallContext& ctx, int n);

ToolReply parse_tool_reply(const ToolCallContext& ctx, std::string_view text);

class ToolCallStream {
 public:
  explicit ToolCallStream(ToolCallContext ctx) : ctx_(std::move(ctx)) {}

  // What may go to the client now.
  struct Step {
    std::string content;
    std::vector<ToolCall> calls;
  };
  Step push(std::string_view text);
  // The reply has ended: whatever was held, as text or calls.
  Step finish();

  bool made_calls() const { return calls_made_ > 0; }
  bool unparsed() const { return unparsed_; }

 private:
  Step push_hermes(std::string_view text);
  // mistral, deepseek: text, then calls between markers.
  Step push_marked(std::string_view text);
  Step finish_marked();
  // One call's text, from its marker to the next (mistral) or its end
  // marker (deepseek) left out; false when it is not a call.
  bool take_calls(std::string_view text, Step& step);

  // mistral, deepseek: where the reply is.
  enum class Phase { kText, kCalls, kAfter, kFailed };

  ToolCallContext ctx_;
  std::string held_;  // text that may still be (part of) a call
  Phase phase_ = Phase::kText;
  bool in_call_ = false;       // hermes: inside <tool_call>...
  bool whole_json_ = false;    // llama3, generic: the reply opened with "{", held to its end
  bool decided_ = false;       // llama3, generic: the first character has been seen
  int calls_made_ = 0;
  bool unparsed_ = false;
};

}  // namespace kvgate::openai
