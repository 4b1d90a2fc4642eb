// Chat template families: detection by marker, native rendering.
//
// Each render_* function below is one reference Jinja template, read as
// C++: markup() is the template's literal text, content() is a message's
// text, strip() is Jinja's trim / .strip() over what it applies to. The
// leading bos_token of a template is never written (RenderedChat says why).
// Pure; any thread.
#include "gateway/openai/chat_template.h"

#include <optional>
#include <vector>

#include "gateway/openai/api_error.h"

namespace kvgate::openai {

namespace {

constexpr std::string_view kAsciiSpace = " \t\n\r\f\v";

bool contains(std::string_view s, std::string_view marker) { return s.find(marker) != std::string_view::npos; }

// Appends segments, merging neighbours of one kind and dropping empty text,
// so equal prompts always have equal segments.
class Builder {
 public:
  Builder& markup(std::string_view s) { return add(s, true); }
  Builder& content(std::string_view s) { return add(s, false); }

  Builder& append(Builder&& other) {
    for (PromptSegment& s : other.segments_) add(s.text, s.markup);
    return *this;
  }

  // Strips ASCII whitespace from both ends of everything built so far, as
  // Jinja's trim does to one string: it may eat through a segment into the
  // next (Llama 2's "<<SYS>>...\n\n" + an all-blank message).
  Builder& strip() {
    while (!segments_.empty()) {
      std::string& t = segments_.front().text;
      const std::size_t first = t.find_first_not_of(kAsciiSpace);
      t.erase(0, first == std::string::npos ? t.size() : first);
      if (!t.empty()) break;
      segments_.erase(segments_.begin());
    }
    while (!segments_.empty()) {
      std::string& t = segments_.back().text;
      const std::size_t last = t.find_last_not_of(kAsciiSpace);
      t.erase(last == std::string::npos ? 0 : last + 1);
      if (!t.empty()) break;
      segments_.pop_back();
    }
    return *this;
  }

  std::vector<PromptSegment> take() { return std::move(segments_); }

 private:
  Builder& add(std::string_view s, bool is_markup) {
    if (s.empty()) return *this;
    if (!segments_.empty() && segments_.back().markup == is_markup) {
      segments_.back().text += s;
    } else {
      segments_.push_back(PromptSegment{std::string(s), is_markup});
    }
    return *this;
  }

  std::vector<PromptSegment> segments_;
};

Builder stripped(std::string_view content) {
  Builder b;
  b.content(content);
  b.strip();
  return b;
}

// A conversation as the templates with an optional leading system message
// see it: that message apart, then the turns.
// It points into the request's messages, which outlive it.
struct Conversation {
  const ChatMessage* system = nullptr;
  std::span<const ChatMessage> turns;

  std::optional<std::size_t> last_user() const {
    for (std::size_t i = turns.size(); i-- > 0;) {
      if (turns[i].role == ChatRole::kUser) return i;
    }
    return std::nullopt;
  }
};

const ChatMessage kEmptyUserTurn{ChatRole::kUser, ""};

// For the families whose templates take one optional first system message
// and then strictly alternating user/assistant turns, starting with a user.
// A system message alone becomes a first user turn with no text, so it is
// rendered where the template puts a system message, never dropped.
Conversation alternating(std::span<const ChatMessage> messages, ChatTemplateFamily family) {
  Conversation c;
  std::size_t start = 0;
  if (!messages.empty() && messages[0].role == ChatRole::kSystem) {
    c.system = &messages[0];
    start = 1;
  }
  for (std::size_t i = start; i < messages.size(); ++i) {
    const bool want_user = (i - start) % 2 == 0;
    const ChatRole role = messages[i].role;
    if ((role == ChatRole::kUser) != want_user || role == ChatRole::kSystem) {
      throw invalid_value("messages[" + std::to_string(i) + "].role",
                          "'" + std::string(chat_role_name(role)) +
                              "' is out of place: this model's chat template (" +
                              std::string(chat_template_family_name(family)) +
                              ") needs an optional first system message, then user and assistant messages "
                              "alternating, starting with user.");
    }
  }
  c.turns = messages.subspan(start);
  if (c.turns.empty()) c.turns = std::span<const ChatMessage>(&kEmptyUserTurn, 1);
  return c;
}

// meta-llama/Llama-2-*-chat: bos_token + '[INST] ' + content.strip() + ' [/INST]',
// the system message wrapped in <<SYS>> inside the first user turn;
// ' ' + content.strip() + ' ' + eos_token for the assistant.
void render_llama2(const Conversation& c, const TemplateTokens& t, bool bos_in_history, Builder& b) {
  for (std::size_t i = 0; i < c.turns.size(); ++i) {
    const ChatMessage& m = c.turns[i];
    if (m.role == ChatRole::kUser) {
      Builder content;
      if (i == 0 && c.system) content.markup("<<SYS>>\n").content(c.system->content).markup("\n<</SYS>>\n\n");
      content.content(m.content).strip();
      if (i > 0 && bos_in_history) b.markup(t.bos);
      b.markup("[INST] ").append(std::move(content)).markup(" [/INST]");
    } else {
      b.markup(" ").append(stripped(m.content)).markup(" ").markup(t.eos);
    }
  }
}

// Meta-Llama-3-*-Instruct: '<|start_header_id|>' + role + '<|end_header_id|>\n\n'
// + content | trim + '<|eot_id|>' for every message.
void render_llama3(std::span<const ChatMessage> messages, Builder& b) {
  for (const ChatMessage& m : messages) {
    b.markup("<|start_header_id|>").markup(chat_role_name(m.role)).markup("<|end_header_id|>\n\n");
    b.append(stripped(m.content)).markup("<|eot_id|>");
  }
  b.markup("<|start_header_id|>assistant<|end_header_id|>\n\n");
}

// Llama-3.1/3.2/3.3-Instruct, without tools: a system header is always
// written, with the knowledge and today's date lines, then the first system
// message | trim; the other messages as Llama 3's.
void render_llama31(std::span<const ChatMessage> messages, Builder& b) {
  std::string_view system;
  if (messages[0].role == ChatRole::kSystem) {
    system = messages[0].content;
    messages = messages.subspan(1);
  }
  b.markup("<|start_header_id|>system<|end_header_id|>\n\n");
  b.markup("Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n");
  b.append(stripped(system)).markup("<|eot_id|>");
  render_llama3(messages, b);
}

// ChatML: '<|im_start|>' + role + '\n' + content + '<|im_end|>' + '\n'.
void render_chatml(std::span<const ChatMessage> messages, Builder& b) {
  for (const ChatMessage& m : messages) {
    b.markup("<|im_start|>").markup(chat_role_name(m.role)).markup("\n");
    b.content(m.content).markup("<|im_end|>\n");
  }
  b.markup("<|im_start|>assistant\n");
}

// google/gemma-3-*-it: the system message and '\n\n' open the first user
// turn; '<start_of_turn>' + (user|model) + '\n' + content | trim + '<end_of_turn>\n'.
void render_gemma(const Conversation& c, Builder& b) {
  for (std::size_t i = 0; i < c.turns.size(); ++i) {
    const ChatMessage& m = c.turns[i];
    b.markup("<start_of_turn>").markup(m.role == ChatRole::kAssistant ? "model" : "user").markup("\n");
    if (i == 0 && c.system) b.content(c.system->content).markup("\n\n");
    b.append(stripped(m.content)).markup("<end_of_turn>\n");
  }
  b.markup("<start_of_turn>model\n");
}

// microsoft/Phi-3.5-mini-instruct: '<|' + role + '|>\n' + content + '<|end|>\n';
// a system message with empty content is left out.
void render_phi3(std::span<const ChatMessage> messages, Builder& b) {
  for (const ChatMessage& m : messages) {
    if (m.role == ChatRole::kSystem && m.content.empty()) continue;
    b.markup("<|").markup(chat_role_name(m.role)).markup("|>\n").content(m.content).markup("<|end|>\n");
  }
  b.markup("<|assistant|>\n");
}

// Mistral-Small-2501 (v7): '[SYSTEM_PROMPT]' + content + '[/SYSTEM_PROMPT]',
// '[INST]' + content + '[/INST]', content + eos_token; in any order.
void render_mistral_v7(std::span<const ChatMessage> messages, const TemplateTokens& t, Builder& b) {
  for (const ChatMessage& m : messages) {
    switch (m.role) {
      case ChatRole::kSystem: b.markup("[SYSTEM_PROMPT]").content(m.content).markup("[/SYSTEM_PROMPT]"); break;
      case ChatRole::kUser: b.markup("[INST]").content(m.content).markup("[/INST]"); break;
      case ChatRole::kAssistant: b.content(m.content).markup(t.eos); break;
    }
  }
}

// How the Mistral v1 / v3 / v3-tekken / legacy templates differ: where the
// spaces are, whether the answer is trimmed, and which user turn carries the
// system message (v3 and tekken: the last, the others: the first).
struct MistralStyle {
  std::string_view open;       // before a user message
  std::string_view close;      // after it
  std::string_view pre_answer;  // before an assistant message
  bool trim_answer;
  bool system_on_last_user;
};

void render_mistral(const Conversation& c, const TemplateTokens& t, const MistralStyle& style, Builder& b) {
  const std::size_t system_turn = style.system_on_last_user ? c.last_user().value_or(0) : 0;
  for (std::size_t i = 0; i < c.turns.size(); ++i) {
    const ChatMessage& m = c.turns[i];
    if (m.role == ChatRole::kUser) {
      b.markup(style.open);
      if (i == system_turn && c.system) b.content(c.system->content).markup("\n\n");
      b.content(m.content).markup(style.close);
    } else {
      b.markup(style.pre_answer);
      if (style.trim_answer) {
        b.append(stripped(m.content));
      } else {
        b.content(m.content);
      }
      b.markup(t.eos);
    }
  }
}

// No template: "System: ...\nUser: ...\nAssistant: ...\n" and "Assistant:".
void render_plain(std::span<const ChatMessage> messages, Builder& b) {
  for (const ChatMessage& m : messages) {
    switch (m.role) {
      case ChatRole::kSystem: b.markup("System: "); break;
      case ChatRole::kUser: b.markup("User: "); break;
      case ChatRole::kAssistant: b.markup("Assistant: "); break;
    }
    b.content(m.content).markup("\n");
  }
  b.markup("Assistant:");
}

ChatTemplateFamily detect_family(std::string_view j) {
  if (contains(j, "<|im_start|>")) return ChatTemplateFamily::kChatML;
  if (contains(j, "<|start_header_id|>")) {
    return contains(j, "Cutting Knowledge Date") ? ChatTemplateFamily::kLlama31 : ChatTemplateFamily::kLlama3;
  }
  if (contains(j, "<start_of_turn>")) return ChatTemplateFamily::kGemma;
  if (contains(j, "<|user|>") && contains(j, "<|end|>")) return ChatTemplateFamily::kPhi3;
  if (!contains(j, "[INST]")) return ChatTemplateFamily::kPlain;
  if (contains(j, "[SYSTEM_PROMPT]")) return ChatTemplateFamily::kMistralV7;
  if (contains(j, "<<SYS>>")) return ChatTemplateFamily::kLlama2;
  if (contains(j, "\"[INST]\"") || contains(j, "'[INST]'")) return ChatTemplateFamily::kMistralV3Tekken;
  if (contains(j, "\" [INST] \"") || contains(j, "' [INST] '")) return ChatTemplateFamily::kMistralV1;
  if (contains(j, "\"[/INST]\"") || contains(j, "'[/INST]'")) return ChatTemplateFamily::kMistralV3;
  return ChatTemplateFamily::kMistralLegacy;
}

}  // namespace

std::string RenderedChat::text() const {
  std::string s;
  for (const PromptSegment& seg : segments) s += seg.text;
  return s;
}

std::string_view chat_template_family_name(ChatTemplateFamily f) {
  switch (f) {
    case ChatTemplateFamily::kPlain: return "plain";
    case ChatTemplateFamily::kChatML: return "chatml";
    case ChatTemplateFamily::kLlama3: return "llama3";
    case ChatTemplateFamily::kLlama31: return "llama3.1";
    case ChatTemplateFamily::kGemma: return "gemma";
    case ChatTemplateFamily::kPhi3: return "phi3";
    case ChatTemplateFamily::kMistralV7: return "mistral-v7";
    case ChatTemplateFamily::kLlama2: return "llama2";
    case ChatTemplateFamily::kMistralV3Tekken: return "mistral-v3-tekken";
    case ChatTemplateFamily::kMistralV1: return "mistral-v1";
    case ChatTemplateFamily::kMistralV3: return "mistral-v3";
    case ChatTemplateFamily::kMistralLegacy: return "mistral-legacy";
  }
  return "plain";
}

ChatTemplate ChatTemplate::detect(std::string_view jinja) {
  const ChatTemplateFamily family = detect_family(jinja);
  // ChatML templates write no BOS (Qwen's vocabulary adds none), and the
  // plain template is kvgate's own; the others begin with bos_token when
  // their text names it.
  const bool bos = family != ChatTemplateFamily::kChatML && family != ChatTemplateFamily::kPlain &&
                   contains(jinja, "bos_token");
  return ChatTemplate(family, bos);
}

ChatTemplate ChatTemplate::from_gguf(const GgufFile& file) {
  return detect(file.optional_string("tokenizer.chat_template").value_or(""));
}

ChatTemplate::ChatTemplate(ChatTemplateFamily family, bool starts_with_bos)
    : family_(family), starts_with_bos_(starts_with_bos) {}

RenderedChat ChatTemplate::render(std::span<const ChatMessage> messages, const TemplateTokens& tokens) const {
  if (messages.empty()) throw invalid_request("A chat needs at least one message.", "messages", "empty_array");
  Builder b;
  switch (family_) {
    case ChatTemplateFamily::kPlain: render_plain(messages, b); break;
    case ChatTemplateFamily::kChatML: render_chatml(messages, b); break;
    case ChatTemplateFamily::kLlama3: render_llama3(messages, b); break;
    case ChatTemplateFamily::kLlama31: render_llama31(messages, b); break;
    case ChatTemplateFamily::kGemma: render_gemma(alternating(messages, family_), b); break;
    case ChatTemplateFamily::kPhi3: render_phi3(messages, b); break;
    case ChatTemplateFamily::kMistralV7: render_mistral_v7(messages, tokens, b); break;
    case ChatTemplateFamily::kLlama2:
      render_llama2(alternating(messages, family_), tokens, starts_with_bos_, b);
      break;
    case ChatTemplateFamily::kMistralV3Tekken:
      render_mistral(alternating(messages, family_), tokens, {"[INST]", "[/INST]", "", false, true}, b);
      break;
    case ChatTemplateFamily::kMistralV1:
      render_mistral(alternating(messages, family_), tokens, {" [INST] ", " [/INST]", " ", false, false}, b);
      break;
    case ChatTemplateFamily::kMistralV3:
      render_mistral(alternating(messages, family_), tokens, {"[INST] ", "[/INST]", " ", true, true}, b);
      break;
    case ChatTemplateFamily::kMistralLegacy:
      render_mistral(alternating(messages, family_), tokens, {"[INST] ", " [/INST]", "", false, false}, b);
      break;
  }
  RenderedChat out;
  out.segments = b.take();
  out.starts_with_bos = starts_with_bos_;
  return out;
}

}  // namespace kvgate::openai
