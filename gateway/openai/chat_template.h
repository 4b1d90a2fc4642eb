// The chat template a server runs for its model, compiled once and rendered
// for every chat request by kvgate's Jinja interpreter (gateway/template/),
// the way Hugging Face's apply_chat_template runs it, so the prompt is the
// one the model was trained on, exactly as vLLM, SGLang and llama.cpp's
// server (--jinja) build it.
//
// Which template: a file the operator gives (`--chat-template`, for a GGUF
// with none or a broken one), else the GGUF's tokenizer.chat_template, else
// kvgate's plain template (kPlainChatTemplate, for models with no chat
// template at all, such as the embedded stories260K):
//   "System: S\nUser: U\nAssistant: A\nUser: U2\nAssistant:"
// A template that does not compile is an error at start-up naming it.
//
// The variables are Hugging Face's: `messages` ({role, content}, the role
// "system", "user" or "assistant"), `add_generation_prompt`, `bos_token`
// and `eos_token` (the vocabulary's texts), and each key of the request's
// `chat_template_kwargs` (vLLM's field: {"enable_thinking": false}) as a
// variable of its own. Every string that comes from the request is marked
// by PromptEncoder::protect first, so none becomes a control token.
//
// Tools: a template that renders them (its text names `tools`) gets the
// request's `tools` as they were sent, each assistant message's
// `tool_calls` (arguments as an object, as Hugging Face passes them) and
// each tool message's `tool_call_id` and `name` (the function it answers).
// A template that does not gets kvgate's generic tool prompt instead, as
// llama.cpp's generic handler does, so tools work on every model: the
// tools as JSON and how to call one (kGenericToolPrompt) after the system
// message (or as one), earlier calls written into their assistant messages
// as that JSON, and tool results as user messages ("Tool result (name):
// ..."). tool_format() says how the model's replies are read
// (tool_call_parser.h).
//
// strftime_now reads the server's local time, as Hugging Face's does: a
// template that prints today's date (Llama 3.1's "Today Date") changes its
// prompt, and so misses yesterday's cached prefixes, at midnight.
//
// Immutable after construction; render() on any thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "engine/model/gguf.h"
#include "gateway/openai/chat_message.h"
#include "gateway/openai/chat_tools.h"
#include "gateway/openai/prompt_encoder.h"
#include "gateway/openai/tool_call_parser.h"
#include "gateway/template/template.h"

namespace kvgate::openai {

extern const std::string_view kPlainChatTemplate;
// What the generic tool prompt says before the tools' JSON.
extern const std::string_view kGenericToolPrompt;

// What a chat request gives the template besides the encoder's tokens.
struct ChatInput {
  std::span<const ChatMessage> messages;
  bool add_generation_prompt = true;
  const boost::json::object* kwargs = nullptr;  // chat_template_kwargs, or none
  const ChatTools* tools = nullptr;             // the tools offered, or none
};

class ChatTemplate {
 public:
  // The file at `path` when not empty, else the model's template, else the
  // plain one. Throws kvgate::Error naming the source when it does not compile.
  // `parser`: the config's tool_call_parser, "auto" (the template's format)
  // or a tool_call_format_name; another name is an Error naming it.
  static ChatTemplate for_model(const GgufFile& model, const std::string& path = {},
                                std::string_view parser = "auto");

  // Throws kvgate::Error "<origin>: <Jinja's message>" when `source` does not compile.
  // `tool_format`, when given, replaces the format read from the template.
  ChatTemplate(std::string_view source, std::string origin, jinja::Clock clock = {},
               std::optional<ToolCallFormat> tool_format = std::nullopt);

  // Where the template came from, for the start-up line and errors:
  // "<model>'s tokenizer.chat_template", "<path>", "kvgate's plain template
  // (the model has none)".
  const std::string& origin() const { return origin_; }
  // The template's text, for PromptEncoder's guarded tokens.
  const std::string& source() const { return source_; }
  // Whether the template renders tools itself, and how its model's tool
  // calls are read (kUnread: not yet; such requests with tools are a 400).
  bool renders_tools() const { return renders_tools_; }
  ToolCallFormat tool_format() const { return tool_format_; }

  // The prompt for a conversation, to be encoded by the same `encoder`.
  // Throws ApiError 400 naming `chat_template_kwargs` for a kwarg that
  // would replace one of the variables above, 400 naming `tools` when the
  // model's calls are kUnread, and 400 with the template's
  // own message when it refuses the conversation (raise_exception) or
  // fails on it (a limit, an undefined variable it uses).
  std::string render(const ChatInput& input, const PromptEncoder& encoder) const;

 private:
  std::string source_;
  bool renders_tools_ = false;
  ToolCallFormat tool_format_ = ToolCallFormat::kGeneric;
  jinja::Template template_;
  std::string origin_;
  jinja::Clock clock_;
};

}  // namespace kvgate::openai
