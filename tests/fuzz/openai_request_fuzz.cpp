// Feeds arbitrary bytes to the OpenAI request parsers as a request body.
// Must hold for any input:
//  - parse_chat_completion_request and parse_completion_request each return
//    a request or throw ApiError with a 4xx status, a message, and a
//    parameter path when one is named; nothing else is thrown, nothing
//    crashes, no sanitizer report;
//  - what they return is in range (the bounds generation_options.h states),
//    and its sampling parameters pass the engine's own validate();
//  - a parsed chat renders under every template family to a prompt or a
//    400 ApiError (alternation), with no empty segment.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "engine/error.h"
#include "gateway/openai/api_error.h"
#include "gateway/openai/chat_request.h"
#include "gateway/openai/chat_template.h"
#include "gateway/openai/completion_request.h"

namespace {

using namespace kvgate::openai;

void check(bool ok) {
  if (!ok) std::abort();
}

void check_error(const ApiError& e) {
  check(e.status >= 400 && e.status < 500);
  check(!e.message.empty());
  check(!e.type.empty());
  check(!e.param || !e.param->empty());
}

void check_options(const GenerationOptions& o) {
  check(!o.max_tokens || *o.max_tokens >= 1);
  check(o.temperature >= 0 && o.temperature <= 2);
  check(o.top_p > 0 && o.top_p <= 1);
  check(o.top_k >= 0);
  check(o.stop.size() <= static_cast<std::size_t>(kMaxStopSequences));
  for (const auto& s : o.stop) check(!s.empty());
  check(!o.include_usage || o.stream);
  kvgate::validate(sampling_params(o, 1));  // throws kvgate::Error, which would end the run
}

constexpr ChatTemplateFamily kFamilies[] = {
    ChatTemplateFamily::kPlain,     ChatTemplateFamily::kChatML,          ChatTemplateFamily::kLlama3,
    ChatTemplateFamily::kGemma,     ChatTemplateFamily::kPhi3,            ChatTemplateFamily::kMistralV7,
    ChatTemplateFamily::kLlama2,    ChatTemplateFamily::kMistralV3Tekken, ChatTemplateFamily::kMistralV1,
    ChatTemplateFamily::kMistralV3, ChatTemplateFamily::kMistralLegacy,
};

void render_everywhere(const ChatCompletionRequest& r) {
  const TemplateTokens tokens{"<s>", "</s>"};
  for (ChatTemplateFamily f : kFamilies) {
    try {
      const RenderedChat chat = ChatTemplate(f, true).render(r.messages, tokens);
      for (const PromptSegment& s : chat.segments) check(!s.text.empty());
    } catch (const ApiError& e) {
      check(e.status == 400);
      check_error(e);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  try {
    const ChatCompletionRequest r = parse_chat_completion_request(body);
    check(!r.model.empty() && !r.messages.empty());
    check_options(r.options);
    render_everywhere(r);
  } catch (const ApiError& e) {
    check_error(e);
  }
  try {
    const CompletionRequest r = parse_completion_request(body);
    check(!r.model.empty());
    check_options(r.options);
    if (const auto* ids = std::get_if<kvgate::Tokens>(&r.prompt)) {
      check(!ids->empty());
      for (kvgate::TokenId id : *ids) check(id >= 0);
    }
  } catch (const ApiError& e) {
    check_error(e);
  }
  return 0;
}
