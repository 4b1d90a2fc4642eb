// Anthropic's Messages request onto kvgate's chat machinery. Pure; any thread.
#include "gateway/anthropic/messages_request.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "gateway/openai/api_error.h"
#include "gateway/openai/json_body.h"
#include "gateway/openai/json_fields.h"

namespace kvgate::anthropic {
namespace json = boost::json;
using openai::ApiError;
using openai::ChatMessage;
using openai::ChatRole;
using openai::FieldReader;
using openai::index_path;
using openai::invalid_type;
using openai::invalid_value;
using openai::json_kind_name;
using openai::missing_parameter;

namespace {

std::string join_path(const std::string& base, std::string_view key) {
  return base.empty() ? std::string(key) : base + "." + std::string(key);
}

ApiError extra_input(const std::string& path) {
  return openai::invalid_request(path + ": Extra inputs are not permitted", path, "invalid_value");
}

// Every key of `o` is one of `known`; any other key is refused by name.
void only_keys(const json::object& o, const std::string& path, std::initializer_list<std::string_view> known) {
  for (const auto& kv : o) {
    const std::string_view key = kv.key();
    if (std::find(known.begin(), known.end(), key) == known.end()) throw extra_input(join_path(path, key));
  }
}

const json::object& need_object(const json::value& v, const std::string& path) {
  if (!v.is_object()) throw invalid_type(path, "an object", json_kind_name(v));
  return v.get_object();
}

// The request's cache_control breakpoints, collected as its blocks are read
// (tools, system, messages: Anthropic's order, which the rules below follow).
class Breakpoints {
 public:
  explicit Breakpoints(std::vector<CacheBreakpoint>& out) : out_(out) {}

  // When block `o` at `path` has cache_control, a breakpoint at `at`.
  // `empty`: the block is a text block with no text, which Anthropic refuses.
  void read(const json::object& o, const std::string& path, CacheBreakpoint at, bool empty = false) {
    const json::value* v = o.if_contains("cache_control");
    if (!v || v->is_null()) return;
    const std::string p = join_path(path, "cache_control");
    const json::object& c = need_object(*v, p);
    only_keys(c, p, {"type", "ttl"});
    const FieldReader f(c, p);
    if (const std::string type = f.need_string("type"); type != "ephemeral")
      throw invalid_value(f.path("type"), "'" + type + "' is not a cache_control type; expected 'ephemeral'.");
    if (const auto ttl = f.string("ttl")) {
      if (*ttl == "1h") at.ttl = std::chrono::seconds(3600);
      else if (*ttl != "5m") throw invalid_value(f.path("ttl"), "'" + *ttl + "' is not a cache TTL; expected '5m' or '1h'.");
    }
    if (empty) throw invalid_value(p, "cache_control cannot be set for empty text blocks.");
    if (at.ttl > std::chrono::seconds(300) && short_seen_)
      throw invalid_value(f.path("ttl"), "a breakpoint with ttl '1h' must come before every one with ttl '5m' "
                                         "(in the order tools, system, messages).");
    short_seen_ = short_seen_ || at.ttl <= std::chrono::seconds(300);
    if (out_.size() == kMaxBreakpoints)
      throw invalid_value(p, "A maximum of " + std::to_string(kMaxBreakpoints) +
                                 " blocks with cache_control may be provided; this is one more.");
    out_.push_back(at);
  }

 private:
  std::vector<CacheBreakpoint>& out_;
  bool short_seen_ = false;
};

// The cut that ends after message `index`, whole or after `bytes` of its content.
CacheBreakpoint after_message(std::size_t index, std::size_t bytes = std::string::npos) {
  CacheBreakpoint at;
  at.messages = index + 1;
  at.content_bytes = bytes;
  return at;
}

const json::array& need_array(const FieldReader& r, std::string_view key) {
  const json::value& v = r.need(key);
  if (!v.is_array()) throw invalid_type(r.path(key), "an array", json_kind_name(v));
  return v.get_array();
}

std::string block_type(const FieldReader& b) {
  auto type = b.string("type");
  if (!type) throw missing_parameter(b.path("type"));
  return *type;
}

ApiError unsupported_block(const FieldReader& b, const std::string& type, std::string_view where) {
  if (type == "image" || type == "document" || type == "search_result")
    return invalid_value(b.path("type"), "'" + type + "' blocks are not served; kvgate serves text only.");
  if (type == "thinking" || type == "redacted_thinking")
    return invalid_value(b.path("type"), "kvgate does not think before answering, so it takes no thinking blocks.");
  return invalid_value(b.path("type"), "'" + type + "' is not a block kvgate takes " + std::string(where) + ".");
}

// A text block's text.
std::string text_of(const FieldReader& b, const json::object& o, const std::string& path) {
  only_keys(o, path, {"type", "text", "citations", "cache_control"});
  return b.need_string("text");
}

// A string, or an array of text blocks joined with "\n" (as chat parts are),
// the content of message `index`. A marked block's breakpoint ends after
// it (`inside`) or after the whole message.
std::string text_content(const json::value& v, const std::string& path, Breakpoints& marks, std::size_t index,
                         bool inside) {
  if (v.is_string()) return std::string(v.get_string());
  if (!v.is_array()) throw invalid_type(path, "a string or an array of text blocks", json_kind_name(v));
  std::string text;
  for (std::size_t j = 0; j < v.get_array().size(); ++j) {
    const std::string p = index_path(path, j);
    const json::object& o = need_object(v.get_array()[j], p);
    const FieldReader b(o, p);
    const std::string type = block_type(b);
    if (type != "text") throw unsupported_block(b, type, "here; only text");
    if (j > 0) text += '\n';
    const std::string block = text_of(b, o, p);
    text += block;
    marks.read(o, p, after_message(index, inside ? text.size() : std::string::npos), block.empty());
  }
  return text;
}

bool called_earlier(const std::vector<ChatMessage>& out, const std::string& id) {
  return std::any_of(out.begin(), out.end(), [&](const ChatMessage& m) {
    return std::any_of(m.tool_calls.begin(), m.tool_calls.end(), [&](const openai::ToolCall& c) { return c.id == id; });
  });
}

// A user turn's blocks: text blocks (consecutive ones one user message),
// tool_result blocks each a tool message, in order.
void add_user_blocks(const json::array& blocks, const std::string& path, std::vector<ChatMessage>& out,
                     Breakpoints& marks) {
  std::string text;
  bool has_text = false;  // (not an optional: gcc 12 warns falsely on one here)
  auto flush = [&] {
    if (has_text) out.push_back({ChatRole::kUser, std::move(text), {}, {}});
    text.clear();
    has_text = false;
  };
  for (std::size_t j = 0; j < blocks.size(); ++j) {
    const std::string p = index_path(path, j);
    const json::object& o = need_object(blocks[j], p);
    const FieldReader b(o, p);
    const std::string type = block_type(b);
    if (type == "text") {
      if (has_text) text += '\n';
      const std::string block = text_of(b, o, p);
      text += block;
      has_text = true;
      marks.read(o, p, after_message(out.size(), text.size()), block.empty());  // flush() pushes it at out.size()
    } else if (type == "tool_result") {
      only_keys(o, p, {"type", "tool_use_id", "content", "is_error", "cache_control"});
      if (b.boolean("is_error").value_or(false))
        throw invalid_value(b.path("is_error"),
                            "kvgate does not tell the model that a tool failed yet; send false, and say so in the "
                            "content.");
      flush();
      ChatMessage m{ChatRole::kTool, "", {}, b.required_string("tool_use_id")};
      if (!called_earlier(out, m.tool_call_id))
        throw invalid_value(b.path("tool_use_id"),
                            "'" + m.tool_call_id + "' is not the id of a tool_use block of an earlier assistant message.");
      if (const json::value* c = b.find("content"))
        m.content = text_content(*c, b.path("content"), marks, out.size(), false);
      marks.read(o, p, after_message(out.size()));
      out.push_back(std::move(m));
    } else {
      throw unsupported_block(b, type, "in a user message; it takes text and tool_result");
    }
  }
  flush();
}

// An assistant turn's blocks, to be message `index`: a breakpoint on any of
// them ends after the whole message (its text and calls render together).
ChatMessage assistant_blocks(const json::array& blocks, const std::string& path, std::size_t index,
                             Breakpoints& marks) {
  ChatMessage m{ChatRole::kAssistant, "", {}, {}};
  bool any_text = false;
  for (std::size_t j = 0; j < blocks.size(); ++j) {
    const std::string p = index_path(path, j);
    const json::object& o = need_object(blocks[j], p);
    const FieldReader b(o, p);
    const std::string type = block_type(b);
    if (type == "text") {
      if (any_text) m.content += '\n';
      const std::string block = text_of(b, o, p);
      m.content += block;
      any_text = true;
      marks.read(o, p, after_message(index), block.empty());
    } else if (type == "tool_use") {
      only_keys(o, p, {"type", "id", "name", "input", "cache_control"});
      marks.read(o, p, after_message(index));
      openai::ToolCall call{b.required_string("id"), b.required_string("name"), ""};
      call.arguments = json::serialize(need_object(b.need("input"), b.path("input")));
      m.tool_calls.push_back(std::move(call));
    } else {
      throw unsupported_block(b, type, "in an assistant message; it takes text and tool_use");
    }
  }
  return m;
}

void add_messages(const FieldReader& body, std::vector<ChatMessage>& out, Breakpoints& marks) {
  const json::array& a = need_array(body, "messages");
  if (a.empty()) throw openai::invalid_request("messages: at least one message is required", "messages", "empty_array");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string path = index_path("messages", i);
    const json::object& o = need_object(a[i], path);
    const FieldReader m(o, path);
    only_keys(o, path, {"role", "content"});
    const std::string role = m.need_string("role");
    const json::value& content = m.need("content");
    if (role == "user") {
      if (content.is_string()) out.push_back({ChatRole::kUser, std::string(content.get_string()), {}, {}});
      else if (content.is_array()) add_user_blocks(content.get_array(), m.path("content"), out, marks);
      else throw invalid_type(m.path("content"), "a string or an array of blocks", json_kind_name(content));
    } else if (role == "assistant") {
      if (i + 1 == a.size())
        throw invalid_value(m.path("role"),
                            "the last message is the assistant's (a prefill), which kvgate does not continue yet; "
                            "end with a user message.");
      if (content.is_string()) out.push_back({ChatRole::kAssistant, std::string(content.get_string()), {}, {}});
      else if (content.is_array()) out.push_back(assistant_blocks(content.get_array(), m.path("content"), out.size(), marks));
      else throw invalid_type(m.path("content"), "a string or an array of blocks", json_kind_name(content));
    } else {
      throw invalid_value(m.path("role"), "'" + role + "' is not a role of the Messages API; expected 'user' or "
                                          "'assistant' (the system prompt is the top-level 'system').");
    }
  }
}

// OpenAI's (and Anthropic's) rule for a tool's name, which the tool-call
// parser and the grammars rely on.
bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// tools and tool_choice, as the chat machinery's ChatTools: each tool an
// OpenAI function {"type": "function", "function": {name, description,
// parameters: input_schema}}, which is what chat templates render.
std::optional<openai::ChatTools> parse_tools(const FieldReader& body, Breakpoints& marks) {
  openai::ChatTools tools;
  if (const json::value* v = body.find("tools")) {
    if (!v->is_array()) throw invalid_type("tools", "an array", json_kind_name(*v));
    for (std::size_t i = 0; i < v->get_array().size(); ++i) {
      const std::string path = index_path("tools", i);
      const json::object& o = need_object(v->get_array()[i], path);
      const FieldReader t(o, path);
      if (const std::string type = t.string("type").value_or("custom"); type != "custom")
        throw invalid_value(t.path("type"), "'" + type +
                                                "' is one of Anthropic's own tools, which kvgate does not run; "
                                                "describe it as a custom tool with an input_schema.");
      only_keys(o, path, {"type", "name", "description", "input_schema", "cache_control"});
      CacheBreakpoint at;  // the tools up to this one, no message
      at.tools = i + 1;
      marks.read(o, path, at);
      const std::string name = t.required_string("name");
      if (!valid_name(name))
        throw invalid_value(t.path("name"), "a tool name is 1 to 64 letters, digits, '_' or '-'; got '" + name + "'.");
      if (std::find(tools.names.begin(), tools.names.end(), name) != tools.names.end())
        throw invalid_value(t.path("name"), "two tools are named '" + name + "'; each needs its own name.");
      json::object function{{"name", name}};
      if (auto d = t.string("description")) function["description"] = *d;
      function["parameters"] = need_object(t.need("input_schema"), t.path("input_schema"));
      tools.definitions.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
      tools.names.push_back(name);
    }
  }
  if (const json::value* c = body.find("tool_choice")) {
    const json::object& o = need_object(*c, "tool_choice");
    const FieldReader choice(o, "tool_choice");
    const std::string type = choice.need_string("type");
    if (type == "auto") {
      tools.choice = openai::ToolChoice::kAuto;
      only_keys(o, "tool_choice", {"type", "disable_parallel_tool_use"});
    } else if (type == "any") {
      tools.choice = openai::ToolChoice::kRequired;
      only_keys(o, "tool_choice", {"type", "disable_parallel_tool_use"});
    } else if (type == "tool") {
      tools.choice = openai::ToolChoice::kNamed;
      only_keys(o, "tool_choice", {"type", "name", "disable_parallel_tool_use"});
      tools.named = choice.required_string("name");
      if (std::find(tools.names.begin(), tools.names.end(), tools.named) == tools.names.end())
        throw invalid_value(choice.path("name"), "no tool is named '" + tools.named + "'.");
    } else if (type == "none") {
      tools.choice = openai::ToolChoice::kNone;
      only_keys(o, "tool_choice", {"type"});
    } else {
      throw invalid_value(choice.path("type"), "expected 'auto', 'any', 'tool' or 'none'.");
    }
    tools.parallel = !choice.boolean("disable_parallel_tool_use").value_or(false);
    if (tools.definitions.empty() && tools.choice != openai::ToolChoice::kNone)
      throw invalid_value("tool_choice", "a tool_choice other than 'none' needs tools.");
  }
  if (tools.definitions.empty()) return std::nullopt;
  return tools;
}

std::vector<std::string> stop_sequences(const FieldReader& body) {
  std::vector<std::string> out;
  const json::value* v = body.find("stop_sequences");
  if (!v) return out;
  if (!v->is_array()) throw invalid_type("stop_sequences", "an array of strings", json_kind_name(*v));
  const json::array& a = v->get_array();
  if (a.size() > kMaxStopSequences)
    throw invalid_value("stop_sequences", "kvgate takes at most " + std::to_string(kMaxStopSequences) +
                                              " stop sequences, but got " + std::to_string(a.size()) + ".");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string path = index_path("stop_sequences", i);
    if (!a[i].is_string()) throw invalid_type(path, "a string", json_kind_name(a[i]));
    const json::string& s = a[i].get_string();
    if (s.size() > openai::kMaxStopBytes)
      throw invalid_value(path, "a stop sequence may be at most " + std::to_string(openai::kMaxStopBytes) + " bytes.");
    if (s.empty()) throw invalid_value(path, "a stop sequence may not be empty.");
    out.emplace_back(s);
  }
  return out;
}

openai::GenerationOptions generation_options(const FieldReader& body, Purpose purpose) {
  openai::GenerationOptions o;
  if (purpose == Purpose::kCreate || body.find("max_tokens")) {
    const int64_t n = purpose == Purpose::kCreate ? body.need_integer("max_tokens", 1, INT32_MAX)
                                                  : body.integer_in(*body.find("max_tokens"), "max_tokens", 1, INT32_MAX);
    o.max_tokens = static_cast<int32_t>(n);
  }
  if (auto t = body.number("temperature")) {
    if (*t < 0 || *t > 1) throw invalid_value("temperature", "expected a number between 0 and 1.");
    o.temperature = static_cast<float>(*t);
  }
  if (auto p = body.number("top_p")) {
    if (!(static_cast<float>(*p) > 0 && *p <= 1))
      throw invalid_value("top_p", "expected a number greater than 0 and at most 1.");
    o.top_p = static_cast<float>(*p);
  }
  if (auto k = body.integer("top_k")) {
    if (*k < 0 || *k > INT32_MAX) throw invalid_value("top_k", "expected an integer of at least 0 (0: off).");
    o.top_k = static_cast<int32_t>(*k);
  }
  o.stop = stop_sequences(body);
  o.stream = body.boolean("stream").value_or(false);
  if (const json::value* m = body.find("metadata")) {
    const json::object& meta = need_object(*m, "metadata");
    only_keys(meta, "metadata", {"user_id"});
    o.user = FieldReader(meta, "metadata").string("user_id").value_or("");
  }
  return o;
}

std::vector<ChatMessage> system_message(const FieldReader& body, Breakpoints& marks) {
  const json::value* s = body.find("system");
  if (!s) return {};
  return {{ChatRole::kSystem, text_content(*s, "system", marks, 0, true), {}, {}}};
}

void refuse_unserved(const json::object& object, const FieldReader& body) {
  if (const json::value* t = body.find("thinking")) {
    const json::object& o = need_object(*t, "thinking");
    if (FieldReader(o, "thinking").need_string("type") != "disabled")
      throw invalid_value("thinking.type", "kvgate does not think before answering; send 'disabled' or leave it out.");
  }
  only_keys(object, "",
            {"model", "messages", "system", "max_tokens", "stop_sequences", "temperature", "top_p", "top_k", "stream",
             "metadata", "tools", "tool_choice", "thinking", "service_tier"});
}

}  // namespace

void check_api_version(std::optional<std::string_view> header) {
  if (!header)
    throw openai::invalid_request("anthropic-version: header is required", "anthropic-version", "invalid_value");
  if (*header != kApiVersion)
    throw openai::invalid_request("anthropic-version: '" + std::string(*header) +
                                      "' is not a version kvgate speaks; send '" + std::string(kApiVersion) + "'.",
                                  "anthropic-version", "invalid_value");
}

void refuse_betas(std::optional<std::string_view> header) {
  if (header)
    throw openai::invalid_request("anthropic-beta: kvgate serves no beta features ('" + std::string(*header) +
                                      "'); leave the header out.",
                                  "anthropic-beta", "invalid_value");
}

MessagesRequest parse_messages_request(std::string_view body_text, Purpose purpose) {
  const json::object object = openai::parse_json_object(body_text);
  const FieldReader body(object, "");
  refuse_unserved(object, body);
  MessagesRequest r;
  r.model = body.required_string("model");
  // Anthropic's order, which the TTL rule reads: tools, system, messages.
  Breakpoints marks(r.breakpoints);
  r.tools = parse_tools(body, marks);
  r.messages = system_message(body, marks);
  add_messages(body, r.messages, marks);
  r.options = generation_options(body, purpose);
  return r;
}

}  // namespace kvgate::anthropic
