// The request's tools, checked. Pure; any thread.
#include "gateway/openai/chat_tools.h"

#include <algorithm>

#include <boost/json/object.hpp>

#include "gateway/openai/api_error.h"

namespace kvgate::openai {
namespace json = boost::json;

namespace {

// OpenAI's rule for a function's name.
bool valid_name(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

struct Function {
  std::string name;
  bool strict = false;
};

Function parse_function(const json::value& tool, const std::string& path) {
  if (!tool.is_object()) throw invalid_type(path, "an object", json_kind_name(tool));
  const FieldReader t(tool.get_object(), path);
  const std::string type = t.string("type").value_or("");
  if (type != "function")
    throw invalid_value(t.path("type"), "'" + type + "' is not a tool type kvgate serves; expected 'function'.");
  const json::value* f = t.find("function");
  if (!f) throw missing_parameter(t.path("function"));
  if (!f->is_object()) throw invalid_type(t.path("function"), "an object", json_kind_name(*f));
  const FieldReader fn(f->get_object(), t.path("function"));
  const std::string name = fn.required_string("name");
  if (!valid_name(name))
    throw invalid_value(fn.path("name"), "a function name is 1 to 64 letters, digits, '_' or '-'; got '" + name + "'.");
  fn.string("description");  // a string when given
  if (const json::value* p = fn.find("parameters"); p && !p->is_object())
    throw invalid_type(fn.path("parameters"), "an object (a JSON schema)", json_kind_name(*p));
  return {name, fn.boolean("strict").value_or(false)};
}

// tool_choice {"type": "function", "function": {"name": "f"}}: the name.
std::string named_function(const json::value& choice, const std::vector<std::string>& names) {
  const FieldReader c(choice.get_object(), "tool_choice");
  if (c.string("type").value_or("") != "function")
    throw invalid_value(c.path("type"), "expected 'function'.");
  const json::value* f = c.find("function");
  if (!f) throw missing_parameter(c.path("function"));
  if (!f->is_object()) throw invalid_type(c.path("function"), "an object", json_kind_name(*f));
  const FieldReader fn(f->get_object(), c.path("function"));
  std::string name = fn.required_string("name");
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw invalid_value(fn.path("name"), "no tool is named '" + name + "'.");
  return name;
}

}  // namespace

std::optional<ChatTools> parse_chat_tools(const FieldReader& body) {
  ChatTools tools;
  if (const json::value* v = body.find("tools")) {
    if (!v->is_array()) throw invalid_type("tools", "an array", json_kind_name(*v));
    tools.definitions = v->get_array();
  }
  std::optional<std::string> strict;  // the path of the first function marked strict
  for (std::size_t i = 0; i < tools.definitions.size(); ++i) {
    Function f = parse_function(tools.definitions[i], index_path("tools", i));
    if (std::find(tools.names.begin(), tools.names.end(), f.name) != tools.names.end())
      throw invalid_value(index_path("tools", i) + ".function.name",
                          "two tools are named '" + f.name + "'; each function needs its own name.");
    if (f.strict && !strict) strict = index_path("tools", i) + ".function.strict";
    tools.names.push_back(std::move(f.name));
  }
  if (const json::value* c = body.find("tool_choice")) {
    if (c->is_string() && c->get_string() == "none") {
      tools.choice = ToolChoice::kNone;
    } else if (c->is_string() && c->get_string() == "auto") {
      tools.choice = ToolChoice::kAuto;
    } else if (c->is_string() && c->get_string() == "required") {
      tools.choice = ToolChoice::kRequired;
    } else if (c->is_object()) {
      tools.choice = ToolChoice::kNamed;
      tools.named = named_function(*c, tools.names);
    } else {
      throw invalid_value("tool_choice", "expected \"auto\", \"none\", \"required\" or a function.");
    }
    if (tools.definitions.empty() && tools.choice != ToolChoice::kNone)
      throw invalid_request("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                            "tool_choice", "invalid_value");
  }
  // A forced call is held to its function's schema, which is what strict
  // asks; a call the model chooses to make is not (yet): refused, not ignored.
  if (strict && tools.choice == ToolChoice::kAuto)
    throw invalid_value(*strict,
                        "kvgate holds a call to its schema only when tool_choice forces it (\"required\" or a "
                        "function); send false, or force the call.");
  tools.parallel = body.boolean("parallel_tool_calls").value_or(true);
  if (tools.definitions.empty()) return std::nullopt;
  return tools;
}

}  // namespace kvgate::openai
