// Feeds arbitrary bytes to the OpenAI request parsers as a request body.
// Must hold for any input:
//  - parse_chat_completion_request, parse_completion_request and
//    parse_responses_request each return
//    a request or throw ApiError with a 4xx status, a message, and a
//    parameter path when one is named; nothing else is thrown, nothing
//    crashes, no sanitizer report;
//  - what they return is in range (the bounds generation_options.h states),
//    and its sampling parameters pass the engine's own validate();
//  - a parsed chat renders under five real templates and the plain one to
//    a prompt or a 400 ApiError (the template's refusal);
//  - encoded with the Llama 2 vocabulary (SentencePiece), every id is in the
//    vocabulary and the BOS and EOS ids are exactly the template's own: one
//    per "<s>" / "</s>" in its markup, plus the vocabulary's leading BOS
//    where the render has none. What a client writes never becomes one.
// The vocabulary is loaded once from ../shared (KVGATE_SHARED overrides);
// without it the encoding checks are skipped.
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/error.h"
#include "base/file_text.h"
#include "engine/model/gguf.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/openai/prompt_encoder.h"
#include "gateway/openai/api_error.h"
#include "gateway/openai/chat_request.h"
#include "gateway/openai/chat_template.h"
#include "gateway/openai/completion_request.h"
#include "gateway/openai/responses_request.h"

namespace {

using namespace kvgate::openai;

void check(bool ok) {
  if (!ok) std::abort();
}

// A refusal must be a 4xx naming what is wrong; one that is not is printed
// before the abort, so that the crash report says which rule it broke.
void check_error(const ApiError& e) {
  const bool ok = e.status >= 400 && e.status < 500 && !e.message.empty() && !e.type.empty() &&
                  (!e.param || !e.param->empty());
  if (!ok)
    std::fprintf(stderr, "bad refusal: status %d, type '%s', param %s, message '%s'\n", e.status, e.type.c_str(),
                 e.param ? ("'" + *e.param + "'").c_str() : "none", e.message.c_str());
  check(ok);
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

struct Vocabulary {
  std::unique_ptr<kvgate::Tokenizer> tokenizer;
  std::unique_ptr<PromptEncoder> encoder;
  std::vector<ChatTemplate> templates;
};

// Real templates whose markup does not depend on what the messages say, so
// the control tokens a render should hold can be counted from a render of
// the same conversation with every '<' in the client's text made '('.
constexpr const char* kTemplates[] = {"Qwen-Qwen2.5-7B-Instruct.jinja", "meta-llama-Llama-3.2-3B-Instruct.jinja",
                                      "mistralai-Mistral-Nemo-Instruct-2407.jinja", "google-gemma-2-2b-it.jinja",
                                      "microsoft-Phi-3.5-mini-instruct.jinja"};

const Vocabulary& llama_vocabulary() {
  static const Vocabulary v = [] {
    Vocabulary out;
    const char* env = std::getenv("KVGATE_SHARED");
    const std::string root = env && *env ? env : KVGATE_SHARED_DIR;
    try {
      auto file = kvgate::GgufFile::open(root + "/testdata/ggml-vocab-llama-spm.gguf");
      out.tokenizer = kvgate::Tokenizer::from_gguf(*file);
      out.encoder = std::make_unique<PromptEncoder>(*out.tokenizer);
      for (const char* t : kTemplates)
        out.templates.emplace_back(kvgate::read_file_text(root + "/templates/jinja/" + t), t);
      out.templates.emplace_back(kPlainChatTemplate, "plain");
    } catch (const kvgate::Error&) {
      // No shared data here: the rendering checks are skipped.
    }
    return out;
  }();
  return v;
}

long occurrences(std::string_view text, std::string_view what) {
  long n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

void render_everywhere(const ChatCompletionRequest& r) {
  const Vocabulary& v = llama_vocabulary();
  if (!v.encoder) return;
  auto scrub = [](std::string& text) {
    for (char& c : text)
      if (c == '<') c = '(';  // in JSON text too: '<' is only ever inside a string
  };
  std::vector<ChatMessage> scrubbed = r.messages;
  for (ChatMessage& m : scrubbed) {
    scrub(m.content);
    scrub(m.tool_call_id);
    for (ToolCall& c : m.tool_calls) scrub(c.id), scrub(c.name), scrub(c.arguments);
  }
  // In place: the tools may nest deeper than a fresh parse's default allows.
  auto scrub_json = [&](auto& self, boost::json::value& v) -> void {
    if (v.is_string()) {
      std::string text(v.get_string());
      scrub(text);
      v = text;
    } else if (v.is_array()) {
      for (boost::json::value& item : v.get_array()) self(self, item);
    } else if (v.is_object()) {
      boost::json::object scrubbed_object;
      for (auto& kv : v.get_object()) {
        std::string key(kv.key());
        scrub(key);
        self(self, kv.value());
        scrubbed_object[key] = std::move(kv.value());
      }
      v = std::move(scrubbed_object);
    }
  };
  std::optional<ChatTools> scrubbed_tools = r.tools;
  if (scrubbed_tools)
    for (boost::json::value& tool : scrubbed_tools->definitions) scrub_json(scrub_json, tool);
  const boost::json::object* kwargs = r.template_kwargs ? &*r.template_kwargs : nullptr;
  const ChatTools* tools = r.tools ? &*r.tools : nullptr;
  for (const ChatTemplate& t : v.templates) {
    try {
      const kvgate::Tokens ids =
          v.encoder->encode(t.render({r.messages, r.add_generation_prompt, kwargs, tools}, *v.encoder));
      const std::string markup = t.render(
          {scrubbed, r.add_generation_prompt, kwargs, scrubbed_tools ? &*scrubbed_tools : nullptr}, *v.encoder);
      const long want_bos = occurrences(markup, "<s>") + (markup.starts_with("<s>") ? 0 : 1);  // add_bos
      long bos = 0, eos = 0;
      for (kvgate::TokenId id : ids) {
        check(id >= 0 && id < v.tokenizer->n_vocab());
        bos += id == v.tokenizer->bos();
        eos += id == v.tokenizer->eos();
      }
      check(bos == want_bos && eos == occurrences(markup, "</s>"));
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
  try {
    const ResponsesRequest r = parse_responses_request(body);
    check(!r.model.empty() && !r.input.empty());
    check_options(r.options);
    check(r.previous_response_id.size() <= kMaxResponseIdBytes);
    check(r.metadata.size() <= kMaxMetadataPairs);
  } catch (const ApiError& e) {
    check_error(e);
  }
  return 0;
}
