// Chat templates: which family a model's `tokenizer.chat_template` (Jinja
// text) belongs to, and that family's rendering, written natively in C++
// (no Jinja engine: a template is data a model file brings, and running it
// would be running the file's code on every request).
//
// Families, detected by their distinctive markers, first match wins:
//   ChatML      <|im_start|>                  (Qwen, Yi, OpenHermes, ...)
//   Llama 3.1   <|start_header_id|> and "Cutting Knowledge Date" (3.1 to 3.3)
//   Llama 3     <|start_header_id|>
//   Gemma       <start_of_turn>
//   Phi-3       <|user|> and <|end|>
//   Mistral v7  [INST] and [SYSTEM_PROMPT]
//   Llama 2     [INST] and <<SYS>>
//   Mistral v3-tekken  [INST], written "[INST]" with no space after (Nemo)
//   Mistral v1  [INST], written " [INST] " (the official v1 template)
//   Mistral v3  [INST], "[/INST]" with no space before (7B v0.3)
//   Mistral (legacy)  any other [INST] template (7B v0.1/v0.2, Mixtral)
//   Plain       none of these, or no template at all (stories260K):
//               "System: S\nUser: U\nAssistant: A\nUser: U2\nAssistant:"
// docs/gateway.md shows each family's exact rendering.
//
// Rendering follows each family's reference Jinja template as it renders a
// conversation, with add_generation_prompt: the prompt ends with the
// assistant's turn opener. Where a reference template would raise (Llama 2,
// Mistral v1/v3/legacy, Gemma: roles must alternate user/assistant after an
// optional first system message) render() throws ApiError 400 naming the
// message. Where it has no place for a system message, that message is put
// where the family's newer templates put it (Gemma 3: before the first user
// message; Mistral legacy: likewise, as Mistral v1 does). `trim` in a
// template strips ASCII whitespace here. Llama 3.1's "Today Date" is the
// template's own default, "26 Jul 2024" (what it renders without
// strftime_now): a prompt must not change with the calendar, or yesterday's
// cached prefixes would all miss today.
//
// Immutable after construction; any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/model/gguf.h"
#include "gateway/openai/chat_message.h"
#include "gateway/openai/prompt_segment.h"

namespace kvgate::openai {

enum class ChatTemplateFamily {
  kPlain,
  kChatML,
  kLlama3,
  kLlama31,
  kGemma,
  kPhi3,
  kMistralV7,
  kLlama2,
  kMistralV3Tekken,
  kMistralV1,
  kMistralV3,
  kMistralLegacy,
};

// "plain", "chatml", "llama3", "llama3.1", "gemma", "phi3", "mistral-v7", "llama2",
// "mistral-v3-tekken", "mistral-v1", "mistral-v3", "mistral-legacy".
std::string_view chat_template_family_name(ChatTemplateFamily f);

// The vocabulary's BOS and EOS texts, which templates write as bos_token and
// eos_token ("<s>", "</s>" for Llama 2 and Mistral). Empty when the
// vocabulary has none.
struct TemplateTokens {
  std::string bos;
  std::string eos;
};

class ChatTemplate {
 public:
  // Detects the family of a Jinja template's text (empty: plain).
  static ChatTemplate detect(std::string_view jinja);
  // The GGUF's tokenizer.chat_template, or plain when it has none.
  static ChatTemplate from_gguf(const GgufFile& file);

  ChatTemplate(ChatTemplateFamily family, bool starts_with_bos);

  ChatTemplateFamily family() const { return family_; }
  // Whether the template begins with bos_token (see RenderedChat).
  bool starts_with_bos() const { return starts_with_bos_; }

  // The prompt for `messages` (at least one), ending with the assistant's
  // turn opener. Throws ApiError 400 for a conversation the family's
  // template refuses (see above).
  RenderedChat render(std::span<const ChatMessage> messages, const TemplateTokens& tokens) const;

 private:
  ChatTemplateFamily family_;
  bool starts_with_bos_;
};

}  // namespace kvgate::openai
