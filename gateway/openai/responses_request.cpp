// The Responses API's request onto kvgate's chat machinery. Pure; any thread.
#include "gateway/openai/responses_request.h"

#include <algorithm>
#include <array>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include "gateway/openai/api_error.h"
#include "gateway/openai/json_body.h"
#include "gateway/openai/json_fields.h"

namespace kvgate::openai {
namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 20> kFields = {
    "model",          "input",       "instructions",    "previous_response_id",   "store",
    "max_output_tokens", "temperature", "top_p",        "stream",                 "prompt_cache_key",
    "prompt_cache_retention", "metadata", "user",       "parallel_tool_calls",    "tools",
    "tool_choice",    "text",        "truncation",      "include",                "background"};

// A field kvgate knows and does not serve, with why; nullptr for one it
// does not know.
const char* unserved(std::string_view key) {
  if (key == "reasoning") return "kvgate's models do not reason before answering; leave reasoning out.";
  if (key == "prompt") return "kvgate keeps no prompt templates; send the input itself.";
  if (key == "conversation") return "kvgate keeps no conversations; continue one with previous_response_id.";
  if (key == "top_logprobs") return "kvgate does not return log probabilities yet.";
  if (key == "max_tool_calls") return "kvgate serves no tools on the Responses API yet.";
  if (key == "stream_options") return "kvgate's Responses stream has no options yet.";
  return nullptr;
}

void only_known_fields(const json::object& body) {
  for (const auto& kv : body) {
    const std::string_view key = kv.key();
    if (std::find(kFields.begin(), kFields.end(), key) != kFields.end()) continue;
    if (kv.value().is_null()) continue;  // null is absent, as for every field
    if (const char* why = unserved(key)) throw invalid_value(key, why);
    if (key.empty())  // no name to put in `param`, which names a field when it is there
      throw invalid_request("Unknown parameter: a field with an empty name.", std::nullopt, "unknown_parameter");
    throw invalid_request("Unknown parameter: '" + std::string(key) + "'.", std::string(key), "unknown_parameter");
  }
}

const json::object& need_object(const json::value& v, const std::string& path) {
  if (!v.is_object()) throw invalid_type(path, "an object", json_kind_name(v));
  return v.get_object();
}

void only_keys(const json::object& o, const std::string& path, std::initializer_list<std::string_view> known) {
  for (const auto& kv : o) {
    if (std::find(known.begin(), known.end(), kv.key()) != known.end()) continue;
    const std::string p = path + "." + std::string(kv.key());
    throw invalid_request("Unknown parameter: '" + p + "'.", p, "unknown_parameter");
  }
}

// The fields that are served only at the value that changes nothing.
void check_inert_fields(const FieldReader& body) {
  if (const json::value* tools = body.find("tools")) {
    if (!tools->is_array()) throw invalid_type("tools", "an array", json_kind_name(*tools));
    if (!tools->get_array().empty())
      throw invalid_value("tools", "kvgate serves no tools on the Responses API yet; use /v1/chat/completions.");
  }
  if (const json::value* choice = body.find("tool_choice")) {
    if (!choice->is_string() || (choice->get_string() != "auto" && choice->get_string() != "none"))
      throw invalid_value("tool_choice", "with no tools offered, only \"auto\" or \"none\".");
  }
  body.boolean("parallel_tool_calls");  // type-checked; with no tools it changes nothing
  if (const json::value* text = body.find("text")) {
    const json::object& t = need_object(*text, "text");
    only_keys(t, "text", {"format"});
    const FieldReader tr(t, "text");
    if (const json::value* format = tr.find("format")) {
      const json::object& f = need_object(*format, "text.format");
      const std::string type = FieldReader(f, "text.format").need_string("type");
      if (type != "text")
        throw invalid_value("text.format.type", "kvgate's Responses API answers plain text only (\"text\"); '" + type +
                                                    "' output is served on /v1/chat/completions' response_format.");
      only_keys(f, "text.format", {"type"});
    }
  }
  if (auto truncation = body.string("truncation"); truncation && *truncation != "disabled")
    throw invalid_value("truncation", "kvgate never drops input to fit the context (a prompt too long is a 400); "
                                      "send \"disabled\" or leave it out.");
  if (const json::value* include = body.find("include")) {
    if (!include->is_array()) throw invalid_type("include", "an array", json_kind_name(*include));
    if (!include->get_array().empty())
      throw invalid_value("include", "kvgate has nothing more to include in a response; send [] or leave it out.");
  }
  if (body.boolean("background").value_or(false))
    throw invalid_value("background", "kvgate answers every response in the request itself; send false or leave it out.");
}

// A message's content: a string, or its text parts joined with "\n" (as
// chat parts are); `part_type` is the one text part the role sends.
std::string content_text(const json::value& v, const std::string& path, std::string_view part_type) {
  if (v.is_string()) return std::string(v.get_string());
  if (!v.is_array()) throw invalid_type(path, "a string or an array of content parts", json_kind_name(v));
  std::string text;
  const json::array& parts = v.get_array();
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const std::string p = index_path(path, j);
    const json::object& o = need_object(parts[j], p);
    const FieldReader part(o, p);
    const std::string type = part.required_string("type");
    if (type != part_type)
      throw invalid_value(part.path("type"), "kvgate serves text only: this message takes '" + std::string(part_type) +
                                                 "' parts, not '" + type + "'.");
    if (part_type == "output_text") {
      only_keys(o, p, {"type", "text", "annotations", "logprobs"});
    } else {
      only_keys(o, p, {"type", "text"});
    }
    if (j > 0) text += '\n';
    text += part.need_string("text");
  }
  return text;
}

ChatMessage message_item(const json::value& v, const std::string& path) {
  const json::object& o = need_object(v, path);
  const FieldReader item(o, path);
  if (auto type = item.string("type"); type && *type != "message")
    throw invalid_value(item.path("type"), "kvgate takes message items only, not '" + *type +
                                               "' (it serves no tools or reasoning on the Responses API).");
  only_keys(o, path, {"type", "role", "content", "id", "status"});
  const std::string role = item.need_string("role");
  const json::value& content = item.need("content");
  if (role == "assistant") return {ChatRole::kAssistant, content_text(content, item.path("content"), "output_text"), {}, {}};
  ChatRole r;
  if (role == "user") r = ChatRole::kUser;
  else if (role == "system" || role == "developer") r = ChatRole::kSystem;  // as chat reads "developer"
  else
    throw invalid_value(item.path("role"), "expected 'user', 'system', 'developer' or 'assistant', but got '" + role +
                                               "'.");
  return {r, content_text(content, item.path("content"), "input_text"), {}, {}};
}

std::vector<ChatMessage> input_messages(const FieldReader& body) {
  const json::value& v = body.need("input");
  if (v.is_string()) return {{ChatRole::kUser, std::string(v.get_string()), {}, {}}};
  if (!v.is_array()) throw invalid_type("input", "a string or an array of input items", json_kind_name(v));
  const json::array& a = v.get_array();
  if (a.empty()) throw invalid_request("input: at least one item is required", "input", "empty_array");
  std::vector<ChatMessage> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(message_item(a[i], index_path("input", i)));
  return out;
}

json::object metadata(const FieldReader& body) {
  const json::value* v = body.find("metadata");
  if (!v) return {};
  const json::object& m = need_object(*v, "metadata");
  if (m.size() > kMaxMetadataPairs)
    throw invalid_value("metadata", "at most " + std::to_string(kMaxMetadataPairs) + " pairs.");
  for (const auto& kv : m) {
    const std::string p = "metadata." + std::string(kv.key());
    if (kv.key().size() > 64) throw invalid_value("metadata", "a key may be at most 64 bytes.");
    if (!kv.value().is_string()) throw invalid_type(p, "a string", json_kind_name(kv.value()));
    if (kv.value().get_string().size() > 512) throw invalid_value(p, "a value may be at most 512 bytes.");
  }
  return m;
}

}  // namespace

ResponsesRequest parse_responses_request(std::string_view text) {
  const json::object body = parse_json_object(text);
  only_known_fields(body);
  const FieldReader r(body, "");
  check_inert_fields(r);
  ResponsesRequest out;
  out.model = r.required_string("model");
  out.input = input_messages(r);
  out.instructions = r.string("instructions");
  if (auto id = r.string("previous_response_id")) {
    if (id->empty() || id->size() > kMaxResponseIdBytes)
      throw invalid_value("previous_response_id", "expected the id of a stored response.");
    out.previous_response_id = std::move(*id);
  }
  out.store = r.boolean("store").value_or(true);
  // temperature, top_p, stream, user, prompt_cache_key and
  // prompt_cache_retention as chat's; only_known_fields() let none of
  // chat's other fields through.
  out.options = parse_generation_options(r, Endpoint::kChatCompletions);
  if (auto n = r.integer("max_output_tokens")) {
    if (*n < 1 || *n > INT32_MAX)
      throw invalid_value("max_output_tokens", "expected an integer between 1 and 2147483647, but got " +
                                                   std::to_string(*n) + " instead.");
    out.options.max_tokens = static_cast<int32_t>(*n);
  }
  out.metadata = metadata(r);
  return out;
}

}  // namespace kvgate::openai
