// A model's reply read for the tool calls it makes, in the syntax its own
// chat template taught it, as vLLM's and llama.cpp's tool parsers read them:
//
//   hermes   (Qwen 2.5, Qwen 3, Hermes 2/3; templates writing <tool_call>):
//            text, then one or more
//            <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
//   llama3   (Llama 3.1 to 3.3): the whole reply is one JSON object,
//            {"name": "f", "parameters": {...}}
//   generic  (kvgate's tool prompt, for templates with no tools: see
//            chat_template.h): the whole reply is {"name": "f", "arguments": {...}}
//
// Other templates that render tools (Mistral's [TOOL_CALLS], DeepSeek's,
// gpt-oss's, ...) write calls kvgate does not read yet: such a model's
// requests with tools are refused (kUnread) rather than answered with its
// call markup as text.
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
#include <string>
#include <string_view>
#include <vector>

#include "gateway/openai/chat_message.h"

namespace kvgate::openai {

enum class ToolCallFormat { kUnread, kHermes, kLlama3, kGeneric };

// "unread", "hermes", "llama3", "generic".
std::string_view tool_call_format_name(ToolCallFormat f);

// What a reply is: its text and the calls it made. `unparsed`: it looked
// like a call (it opened one) but was not one, so it is all text.
struct ToolReply {
  std::string content;
  std::vector<ToolCall> calls;
  bool unparsed = false;
};

// How the calls are named: ids `<id_prefix><n>` (n from 0, in order),
// names checked against the request's functions.
struct ToolCallContext {
  ToolCallFormat format = ToolCallFormat::kGeneric;
  std::string id_prefix;             // "call_<request id>_"
  std::vector<std::string> names;    // the functions offered
  bool parallel = true;              // parallel_tool_calls: false keeps a reply's first call only
};

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

  ToolCallContext ctx_;
  std::string held_;  // text that may still be (part of) a call
  bool in_call_ = false;       // hermes: inside <tool_call>...
  bool whole_json_ = false;    // llama3, generic: the reply opened with "{", held to its end
  bool decided_ = false;       // llama3, generic: the first character has been seen
  int calls_made_ = 0;
  bool unparsed_ = false;
};

}  // namespace kvgate::openai
