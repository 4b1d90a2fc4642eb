// Chat templates: the model's Jinja, compiled once, rendered per request
// over the request's strings, protected. Pure; any thread.
#include "gateway/openai/chat_template.h"

#include <boost/json/value.hpp>

#include "base/error.h"
#include "base/file_text.h"
#include "gateway/openai/api_error.h"
#include "gateway/template/chat_context.h"
#include "gateway/template/template_error.h"

namespace kvgate::openai {
namespace json = boost::json;

const std::string_view kPlainChatTemplate =
    "{% for message in messages %}"
    "{% if message.role == 'system' %}System: {% elif message.role == 'user' %}User: {% else %}Assistant: {% endif %}"
    "{{ message.content }}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}";

namespace {

// The variables kvgate sets, which chat_template_kwargs may not replace.
constexpr std::string_view kReserved[] = {"messages", "tools", "add_generation_prompt", "bos_token", "eos_token"};

// A request's JSON with every string, keys included, protected.
json::value protected_copy(const json::value& v, const PromptEncoder& encoder) {
  switch (v.kind()) {
    case json::kind::string: return json::value(encoder.protect(v.get_string()));
    case json::kind::array: {
      json::array out;
      out.reserve(v.get_array().size());
      for (const json::value& item : v.get_array()) out.push_back(protected_copy(item, encoder));
      return out;
    }
    case json::kind::object: {
      json::object out;
      for (const auto& kv : v.get_object()) out[encoder.protect(kv.key())] = protected_copy(kv.value(), encoder);
      return out;
    }
    default: return v;
  }
}

jinja::Template compile(std::string_view source, const std::string& origin) {
  try {
    return jinja::Template::compile(source);
  } catch (const jinja::TemplateError& e) {
    throw Error(origin + ": the chat template does not compile: " + e.what() +
                " (give another with --chat-template FILE)");
  }
}

}  // namespace

ChatTemplate ChatTemplate::for_model(const GgufFile& model, const std::string& path) {
  if (!path.empty()) return ChatTemplate(read_file_text(path), path);
  if (std::optional<std::string> t = model.optional_string("tokenizer.chat_template"))
    return ChatTemplate(*t, model.source() + "'s tokenizer.chat_template");
  return ChatTemplate(kPlainChatTemplate, "kvgate's plain template (the model has none)");
}

ChatTemplate::ChatTemplate(std::string_view source, std::string origin, jinja::Clock clock)
    : source_(source), template_(compile(source_, origin)), origin_(std::move(origin)), clock_(std::move(clock)) {}

std::string ChatTemplate::render(const ChatInput& input, const PromptEncoder& encoder) const {
  json::array messages;
  messages.reserve(input.messages.size());
  for (const ChatMessage& m : input.messages) {
    // The role is one of the three names templates know, never client text.
    messages.push_back(json::object{{"role", chat_role_name(m.role)}, {"content", encoder.protect(m.content)}});
  }
  json::object conversation{{"messages", std::move(messages)},
                            {"add_generation_prompt", input.add_generation_prompt},
                            {"bos_token", encoder.template_tokens().bos},
                            {"eos_token", encoder.template_tokens().eos}};
  if (input.kwargs) {
    json::object extra;
    for (const auto& kv : *input.kwargs) {
      for (std::string_view reserved : kReserved) {
        if (kv.key() == reserved)
          throw invalid_value("chat_template_kwargs." + std::string(reserved),
                              "kvgate sets this template variable from the request itself; leave it out.");
      }
      extra[encoder.protect(kv.key())] = protected_copy(kv.value(), encoder);
    }
    conversation["extra"] = std::move(extra);
  }
  const jinja::Value context = jinja::chat_context(conversation);
  jinja::RenderOptions options;
  options.clock = clock_;
  try {
    return template_.render(context, options);
  } catch (const jinja::TemplateError& e) {
    throw invalid_request(std::string("The model's chat template refused this conversation: ") + e.what(), "messages",
                          "chat_template_error");
  }
}

}  // namespace kvgate::openai
