// What a chat request holds the model's output to, if anything: the
// response_format it asks for (OpenAI's json_object and json_schema), or a
// tool call it forces (tool_choice "required" or one named function),
// written in the syntax the model's template taught it. The result is a
// grammar spec (engine/grammar/grammar_spec.h) that the server compiles and
// the engine enforces token by token; this file only decides what it says.
//
//   json_object               any JSON object
//   json_schema               compact JSON valid under json_schema.schema
//   tool_choice required      one call to any offered function, its
//                             arguments valid under the function's
//                             parameters (any object without them)
//   tool_choice {function}    one call to that function
//
// A forced call is written the ways the format's parser reads (Mistral's
// "[TOOL_CALLS]f[ARGS]{...}" and Nemo's "[TOOL_CALLS][{...}]"; DeepSeek
// V3/R1's fenced call and V3.1's bare one), a choice, so the model's own
// likelihood picks the way its template taught it. Mistral's and DeepSeek's
// markers are control tokens, which a model writes only as those tokens:
// their spec names the format, {"tool_call_format": "mistral", "grammar":
// G}, and the server compiles G's markup with each marker written as its
// token (serving/output_grammars.h); a tool request decodes the tokens as
// their text, so the parser reads the call.
//
// A forced call is one call, whatever parallel_tool_calls says. A forced
// call wins over response_format (which shapes the answer after the
// tools, not the call); with tool_choice "none" the format applies; with
// "auto" the model must be free to choose between a call and an answer,
// which kvgate cannot yet constrain together: a 400 naming
// response_format.
//
// Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "gateway/openai/chat_tools.h"
#include "gateway/openai/json_fields.h"
#include "gateway/openai/tool_call_parser.h"

namespace kvgate::openai {

enum class OutputKind { kText, kJsonObject, kJsonSchema, kToolCall };

// "text", "json_object", "json_schema", "tool_call": the metric's label.
std::string_view output_kind_name(OutputKind k);

struct ResponseFormat {
  OutputKind kind = OutputKind::kText;  // kText, kJsonObject or kJsonSchema
  boost::json::value schema;            // kJsonSchema: json_schema.schema, as sent
};

// response_format, absent or {"type": "text"} | {"type": "json_object"} |
// {"type": "json_schema", "json_schema": {"name", "schema", "strict",
// "description"}}. Throws ApiError 400 naming the field. The schema itself
// is checked when it compiles (the server's 400 names its keyword).
ResponseFormat parse_response_format(const FieldReader& body);

struct OutputConstraint {
  OutputKind kind = OutputKind::kText;
  boost::json::value spec;  // the grammar spec
  std::string field;        // what a spec that does not compile is blamed on
};

// None when the output is free. Throws ApiError 400 for response_format
// with tool_choice auto, and for a forced call in a syntax kvgate cannot
// write (`syntax` kUnread).
std::optional<OutputConstraint> output_constraint(const ResponseFormat& format, const std::optional<ChatTools>& tools,
                                                  ToolCallFormat syntax);

// A spec as the server compiles it: the grammar spec proper, and the
// tool-call format whose marker control tokens it writes as their text
// (none for most). `grammar` refers into `spec`. Throws kvgate::Error for
// a "tool_call_format" spec that is not {"tool_call_format": a format's
// name, "grammar": G} (a spec from a front is read here too).
struct MarkedGrammar {
  const boost::json::value& grammar;
  std::optional<ToolCallFormat> markers;
};
MarkedGrammar marked_grammar(const boost::json::value& spec);

}  // namespace kvgate::openai
