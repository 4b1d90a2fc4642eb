// The output a chat request asks for, as a grammar spec. Pure; any thread.
#include "gateway/openai/structured_output.h"

#include <boost/json.hpp>

#include "base/error.h"
#include "gateway/openai/api_error.h"

namespace kvgate::openai {
namespace json = boost::json;

namespace {

json::value literal(std::string text) { return json::object{{"literal", std::move(text)}}; }

json::value sequence(json::array parts) { return json::object{{"sequence", std::move(parts)}}; }

// One call to `function` (an entry of the request's `tools`) in `syntax`:
// the markup and the name are literals, the arguments a schema. Compact
// JSON throughout, which every parser in tool_call_parser.h reads. Where a
// family writes calls more than one way (Mistral's templates, DeepSeek's
// versions), a choice of the ways its parser reads, so the model's own
// likelihood picks the one its template taught it.
json::value call_spec(const json::object& function, ToolCallFormat syntax) {
  const std::string raw_name(function.at("function").at("name").as_string());  // letters, digits, '_', '-'
  const std::string name = json::serialize(function.at("function").at("name"));  // quoted and escaped
  const json::value* params = function.at("function").as_object().if_contains("parameters");
  json::value args = params ? json::value(json::object{{"json_schema", *params}})
                            : json::value(json::object{{"json_object", json::object{}}});
  switch (syntax) {
    case ToolCallFormat::kHermes:
      return sequence({literal("<tool_call>\n{\"name\":" + name + ",\"arguments\":"), std::move(args),
                       literal("}\n</tool_call>")});
    case ToolCallFormat::kLlama3:
      return sequence({literal("{\"name\":" + name + ",\"parameters\":"), std::move(args), literal("}")});
    case ToolCallFormat::kGeneric:
      return sequence({literal("{\"name\":" + name + ",\"arguments\":"), std::move(args), literal("}")});
    case ToolCallFormat::kMistral:
      // Devstral, Ministral 3, Magistral: name[ARGS]{...}; Nemo: a JSON list of calls.
      return json::object{
          {"choice", json::array{sequence({literal("[TOOL_CALLS]" + raw_name + "[ARGS]"), args}),
                                 sequence({literal("[TOOL_CALLS][{\"name\":" + name + ",\"arguments\":"), args,
                                           literal("}]")})}}};
    case ToolCallFormat::kDeepSeek:
      // V3 and R1: "function", the name, the arguments fenced as json; V3.1: the name, the arguments.
      return json::object{
          {"choice",
           json::array{sequence({literal("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>" + raw_name +
                                         "\n```json\n"),
                                 args, literal("\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>")}),
                       sequence({literal("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" + raw_name + "<｜tool▁sep｜>"), args,
                                 literal("<｜tool▁call▁end｜><｜tool▁calls▁end｜>")})}}};
    case ToolCallFormat::kUnread: break;
  }
  throw invalid_value("tool_choice", "kvgate cannot force a call in this model's tool-call syntax (" +
                                         std::string(tool_call_format_name(syntax)) + "); send \"auto\".");
}

// Whether the format's markers are control tokens the grammar writes:
// then the server masks with them standing for their text.
bool writes_markers(ToolCallFormat syntax) {
  return syntax == ToolCallFormat::kMistral || syntax == ToolCallFormat::kDeepSeek;
}

constexpr std::string_view kMarkersKey = "tool_call_format";
constexpr std::string_view kGrammarKey = "grammar";

}  // namespace

std::string_view output_kind_name(OutputKind k) {
  switch (k) {
    case OutputKind::kText: return "text";
    case OutputKind::kJsonObject: return "json_object";
    case OutputKind::kJsonSchema: return "json_schema";
    case OutputKind::kToolCall: return "tool_call";
  }
  return "";
}

ResponseFormat parse_response_format(const FieldReader& body) {
  ResponseFormat f;
  const json::value* v = body.find("response_format");
  if (!v || v->is_null()) return f;
  if (!v->is_object()) throw invalid_type("response_format", "an object", json_kind_name(*v));
  const FieldReader r(v->get_object(), "response_format");
  const std::string type = r.required_string("type");
  if (type == "text") return f;
  if (type == "json_object") {
    f.kind = OutputKind::kJsonObject;
    return f;
  }
  if (type != "json_schema")
    throw invalid_value(r.path("type"), "expected 'text', 'json_object' or 'json_schema'; got '" + type + "'.");
  const json::value* js = r.find("json_schema");
  if (!js) throw missing_parameter(r.path("json_schema"));
  if (!js->is_object()) throw invalid_type(r.path("json_schema"), "an object", json_kind_name(*js));
  const FieldReader s(js->get_object(), r.path("json_schema"));
  s.required_string("name");
  s.string("description");
  s.boolean("strict");  // the output is held to the schema either way
  const json::value* schema = s.find("schema");
  if (!schema) throw missing_parameter(s.path("schema"));
  if (!schema->is_object() && !schema->is_bool())
    throw invalid_type(s.path("schema"), "an object (a JSON schema)", json_kind_name(*schema));
  f.kind = OutputKind::kJsonSchema;
  f.schema = *schema;
  return f;
}

std::optional<OutputConstraint> output_constraint(const ResponseFormat& format, const std::optional<ChatTools>& tools,
                                                  ToolCallFormat syntax) {
  const ToolChoice choice = tools ? tools->choice : ToolChoice::kNone;
  if (choice == ToolChoice::kRequired || choice == ToolChoice::kNamed) {
    json::array calls;
    for (std::size_t i = 0; i < tools->names.size(); ++i)
      if (choice == ToolChoice::kRequired || tools->names[i] == tools->named)
        calls.push_back(call_spec(tools->definitions[i].as_object(), syntax));
    json::value spec = json::object{{"choice", std::move(calls)}};
    if (writes_markers(syntax))
      spec = json::object{{kMarkersKey, tool_call_format_name(syntax)}, {kGrammarKey, std::move(spec)}};
    return OutputConstraint{OutputKind::kToolCall, std::move(spec), "tools"};
  }
  if (format.kind == OutputKind::kText) return std::nullopt;
  if (choice == ToolChoice::kAuto)
    throw invalid_value("response_format",
                        "kvgate cannot yet hold an answer to a format while the model may instead call a tool; send "
                        "tool_choice \"none\", or force the call.");
  if (format.kind == OutputKind::kJsonObject)
    return OutputConstraint{OutputKind::kJsonObject, json::object{{"json_object", json::object{}}}, "response_format"};
  return OutputConstraint{OutputKind::kJsonSchema, json::object{{"json_schema", format.schema}},
                          "response_format.json_schema.schema"};
}

MarkedGrammar marked_grammar(const boost::json::value& spec) {
  const json::object* o = spec.if_object();
  const json::value* format = o ? o->if_contains(kMarkersKey) : nullptr;
  if (!format) return {spec, std::nullopt};
  const json::value* grammar = o->if_contains(kGrammarKey);
  const std::optional<ToolCallFormat> f =
      format->is_string() ? tool_call_format_named(format->get_string()) : std::nullopt;
  if (!f || !grammar || o->size() != 2)
    throw Error("a grammar spec with \"tool_call_format\" is {\"tool_call_format\": a format's name, \"grammar\": G}; got " +
                json::serialize(spec).substr(0, 200));
  return {*grammar, f};
}

}  // namespace kvgate::openai
