// Chat templates: the model's Jinja, compiled once, rendered per request
// over the request's strings, protected. Pure; any thread.
#include "gateway/openai/chat_template.h"

#include <boost/json.hpp>

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

const std::string_view kGenericToolPrompt =
    "You can call tools. To call one, answer with only a JSON object, {\"name\": <the tool's name>, "
    "\"arguments\": <an object of its arguments>}, and nothing else. The tools:\n";

namespace {

// How a template's model writes tool calls, from the template's own text.
ToolCallFormat tool_format_of(std::string_view source, bool renders_tools) {
  if (!renders_tools) return ToolCallFormat::kGeneric;
  if (source.find("<tool_call>") != std::string_view::npos) return ToolCallFormat::kHermes;
  if (source.find("[TOOL_CALLS]") != std::string_view::npos) return ToolCallFormat::kMistral;
  if (source.find("<｜tool▁call▁begin｜>") != std::string_view::npos) return ToolCallFormat::kDeepSeek;
  if (source.find("<|start_header_id|>") != std::string_view::npos) return ToolCallFormat::kLlama3;
  return ToolCallFormat::kUnread;
}

// {"name": ..., "arguments": {...}}: a call as the generic prompt asks for it.
std::string generic_call_json(const ToolCall& c) {
  json::object o{{"name", c.name}, {"arguments", json::parse(c.arguments)}};
  return json::serialize(o);
}

std::string_view called_function(std::span<const ChatMessage> messages, const std::string& id) {
  for (const ChatMessage& m : messages)
    for (const ToolCall& c : m.tool_calls)
      if (c.id == id) return c.name;
  return {};
}

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

ChatTemplate ChatTemplate::for_model(const GgufFile& model, const std::string& path, std::string_view parser) {
  std::optional<ToolCallFormat> format;
  if (parser != "auto") {
    format = tool_call_format_named(parser);
    if (!format)
      throw Error("unknown tool call parser '" + std::string(parser) +
                  "' (tool_call_parser: auto, hermes, llama3, mistral, deepseek or generic)");
  }
  if (!path.empty()) return ChatTemplate(read_file_text(path), path, {}, format);
  if (std::optional<std::string> t = model.optional_string("tokenizer.chat_template"))
    return ChatTemplate(*t, model.source() + "'s tokenizer.chat_template", {}, format);
  return ChatTemplate(kPlainChatTemplate, "kvgate's plain template (the model has none)", {}, format);
}

ChatTemplate::ChatTemplate(std::string_view source, std::string origin, jinja::Clock clock,
                           std::optional<ToolCallFormat> tool_format)
    : source_(source),
      renders_tools_(source_.find("tools") != std::string::npos),
      tool_format_(tool_format.value_or(tool_format_of(source_, renders_tools_))),
      template_(compile(source_, origin)),
      origin_(std::move(origin)),
      clock_(std::move(clock)) {}

std::string ChatTemplate::render(const ChatInput& input, const PromptEncoder& encoder) const {
  if (input.tools && tool_format_ == ToolCallFormat::kUnread)
    throw invalid_value("tools", "kvgate does not read this model's tool calls yet (its chat template, " + origin_ +
                                     ", writes them in a format kvgate does not read: not hermes, llama3, mistral or deepseek); leave 'tools' out, "
                                     "or name the parser with --tool-call-parser.");
  const bool generic = !renders_tools_;
  json::array messages;
  messages.reserve(input.messages.size() + 1);
  std::string tool_prompt;
  if (generic && input.tools) {
    tool_prompt = std::string(kGenericToolPrompt) + encoder.protect(json::serialize(input.tools->definitions));
    if (input.messages.empty() || input.messages.front().role != ChatRole::kSystem)
      messages.push_back(json::object{{"role", "system"}, {"content", tool_prompt}});
  }
  for (const ChatMessage& m : input.messages) {
    // The role is one of the names templates know, never client text.
    json::object o{{"role", chat_role_name(m.role)}, {"content", encoder.protect(m.content)}};
    if (generic) {
      std::string content = encoder.protect(m.content);
      auto append = [&content](std::string_view separator, const std::string& text) {
        if (!content.empty()) content.append(separator);
        content.append(text);
      };
      if (m.role == ChatRole::kSystem && &m == &input.messages.front() && !tool_prompt.empty())
        append("\n\n", tool_prompt);
      for (const ToolCall& c : m.tool_calls) append("\n", encoder.protect(generic_call_json(c)));
      if (m.role == ChatRole::kTool) {
        o["role"] = "user";
        std::string result = "Tool result (";
        result.append(encoder.protect(called_function(input.messages, m.tool_call_id))).append("): ").append(content);
        content = std::move(result);
      }
      o["content"] = std::move(content);
    } else {
      if (!m.tool_calls.empty()) {
        json::array calls;
        for (const ToolCall& c : m.tool_calls) {
          calls.push_back(json::object{
              {"id", encoder.protect(c.id)},
              {"type", "function"},
              {"function", json::object{{"name", encoder.protect(c.name)},
                                        {"arguments", protected_copy(json::parse(c.arguments), encoder)}}}});
        }
        o["tool_calls"] = std::move(calls);
      }
      if (m.role == ChatRole::kTool) {
        o["tool_call_id"] = encoder.protect(m.tool_call_id);
        o["name"] = encoder.protect(called_function(input.messages, m.tool_call_id));
      }
    }
    messages.push_back(std::move(o));
  }
  json::object conversation{{"messages", std::move(messages)},
                            {"add_generation_prompt", input.add_generation_prompt},
                            {"bos_token", encoder.template_tokens().bos},
                            {"eos_token", encoder.template_tokens().eos}};
  if (input.tools && !generic) conversation["tools"] = protected_copy(input.tools->definitions, encoder);
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
