// Chat completion bodies to ChatCompletionRequest. Pure; any thread.
#include "gateway/openai/chat_request.h"

#include <algorithm>

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

#include "gateway/openai/api_error.h"
#include "gateway/openai/json_body.h"
#include "gateway/openai/json_fields.h"

namespace kvgate::openai {
namespace json = boost::json;

namespace {

ChatRole parse_role(const FieldReader& m) {
  auto role = m.string("role");
  if (!role) throw missing_parameter(m.path("role"));
  if (*role == "system" || *role == "developer") return ChatRole::kSystem;
  if (*role == "user") return ChatRole::kUser;
  if (*role == "assistant") return ChatRole::kAssistant;
  if (*role == "tool") return ChatRole::kTool;
  throw invalid_value(m.path("role"), "'" + *role +
                                          "' is not a supported role; expected 'system', 'developer', 'user', "
                                          "'assistant' or 'tool'.");
}

// A string, or an array of {"type": "text", "text": ...} parts.
std::string parse_content(const FieldReader& m, ChatRole role) {
  const std::string path = m.path("content");
  const json::value* c = m.find("content");
  if (!c) {
    // An assistant turn may carry no text (OpenAI allows null content there).
    if (role == ChatRole::kAssistant) return "";
    throw missing_parameter(path);
  }
  if (c->is_string()) return std::string(c->get_string());
  if (!c->is_array()) throw invalid_type(path, "a string or an array of content parts", json_kind_name(*c));
  const json::array& parts = c->get_array();
  if (parts.empty())
    throw invalid_request("Invalid '" + path + "': empty array. Expected an array with minimum length 1.", path,
                          "empty_array");
  std::string text;
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const std::string part_path = index_path(path, j);
    if (!parts[j].is_object()) throw invalid_type(part_path, "an object", json_kind_name(parts[j]));
    FieldReader part(parts[j].get_object(), part_path);
    auto type = part.string("type");
    if (!type) throw missing_parameter(part.path("type"));
    if (*type != "text")
      throw invalid_value(part.path("type"), "'" + *type + "' content is not supported; kvgate serves text only.");
    auto t = part.string("text");
    if (!t) throw missing_parameter(part.path("text"));
    if (j > 0) text += '\n';
    text += *t;
  }
  return text;
}

// An assistant message's tool_calls: [{"id", "type": "function",
// "function": {"name", "arguments": "<JSON object>"}}], arguments checked
// to be an object's JSON (a template is given the object, as Hugging Face
// gives it).
std::vector<ToolCall> parse_tool_calls(const FieldReader& m) {
  std::vector<ToolCall> out;
  const json::value* v = m.find("tool_calls");
  if (!v) return out;
  if (!v->is_array()) throw invalid_type(m.path("tool_calls"), "an array", json_kind_name(*v));
  for (std::size_t j = 0; j < v->get_array().size(); ++j) {
    const json::value& item = v->get_array()[j];
    const std::string path = index_path(m.path("tool_calls"), j);
    if (!item.is_object()) throw invalid_type(path, "an object", json_kind_name(item));
    const FieldReader call(item.get_object(), path);
    ToolCall c;
    c.id = call.required_string("id");
    if (const std::string type = call.string("type").value_or("function"); type != "function")
      throw invalid_value(call.path("type"), "'" + type + "' is not a tool call type; expected 'function'.");
    const json::value* f = call.find("function");
    if (!f) throw missing_parameter(call.path("function"));
    if (!f->is_object()) throw invalid_type(call.path("function"), "an object", json_kind_name(*f));
    const FieldReader fn(f->get_object(), call.path("function"));
    c.name = fn.required_string("name");
    c.arguments = fn.required_string("arguments");
    boost::system::error_code ec;
    const json::value args = json::parse(c.arguments, ec);
    if (ec || !args.is_object())
      throw invalid_value(fn.path("arguments"), "expected the JSON text of an object, as a model writes arguments.");
    out.push_back(std::move(c));
  }
  return out;
}

// Fields kvgate does not honour yet, each of which changes the answer: a
// 400 naming it beats an answer that silently ignored it.
void refuse_unsupported(const FieldReader& body) {
  auto refuse = [&](std::string_view key, std::string_view why) { throw invalid_value(body.path(key), why); };
  if (body.find("functions")) refuse("functions", "kvgate does not call functions; leave it out.");
  if (const json::value* call = body.find("function_call"); call && !(call->is_string() && call->get_string() == "none"))
    refuse("function_call", "kvgate does not call functions; send \"none\" or leave it out.");
  if (const json::value* bias = body.find("logit_bias"); bias && !(bias->is_object() && bias->get_object().empty()))
    refuse("logit_bias", "kvgate does not apply logit_bias; leave it out.");
  if (body.find("chat_template"))
    refuse("chat_template", "kvgate renders the model's own chat template; a request cannot send another.");
  if (body.boolean("continue_final_message").value_or(false))
    refuse("continue_final_message", "kvgate does not continue a final message; send false or leave it out.");
}

std::vector<ChatMessage> parse_messages(const FieldReader& body) {
  const json::value* v = body.find("messages");
  if (!v) throw missing_parameter("messages");
  if (!v->is_array()) throw invalid_type("messages", "an array", json_kind_name(*v));
  const json::array& a = v->get_array();
  if (a.empty())
    throw invalid_request("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                          "empty array instead.",
                          "messages", "empty_array");
  std::vector<ChatMessage> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string path = index_path("messages", i);
    if (!a[i].is_object()) throw invalid_type(path, "an object", json_kind_name(a[i]));
    FieldReader m(a[i].get_object(), path);
    ChatMessage msg;
    msg.role = parse_role(m);
    msg.content = parse_content(m, msg.role);
    if (msg.role == ChatRole::kAssistant) msg.tool_calls = parse_tool_calls(m);
    if (msg.role == ChatRole::kTool) {
      msg.tool_call_id = m.required_string("tool_call_id");
      const bool known = std::any_of(out.begin(), out.end(), [&](const ChatMessage& earlier) {
        return std::any_of(earlier.tool_calls.begin(), earlier.tool_calls.end(),
                           [&](const ToolCall& c) { return c.id == msg.tool_call_id; });
      });
      if (!known)
        throw invalid_value(m.path("tool_call_id"), "'" + msg.tool_call_id +
                                                        "' is not the id of a tool call an earlier assistant "
                                                        "message made.");
    }
    out.push_back(std::move(msg));
  }
  return out;
}

}  // namespace

ChatCompletionRequest parse_chat_completion_request(std::string_view body_text) {
  const json::object object = parse_json_object(body_text);
  const FieldReader body(object, "");
  ChatCompletionRequest r;
  r.model = body.required_string("model");
  r.messages = parse_messages(body);
  r.options = parse_generation_options(body, Endpoint::kChatCompletions);
  refuse_unsupported(body);
  r.tools = parse_chat_tools(body);
  r.response_format = parse_response_format(body);
  r.add_generation_prompt = body.boolean("add_generation_prompt").value_or(true);
  if (const json::value* kwargs = body.find("chat_template_kwargs")) {
    if (!kwargs->is_object()) throw invalid_type("chat_template_kwargs", "an object", json_kind_name(*kwargs));
    r.template_kwargs = kwargs->get_object();
  }
  if (body.boolean("logprobs").value_or(false))
    throw invalid_value("logprobs", "kvgate does not return log probabilities; send false or leave it out.");
  if (body.find("top_logprobs"))
    throw invalid_value("top_logprobs", "kvgate does not return log probabilities; leave it out.");
  return r;
}

}  // namespace kvgate::openai
