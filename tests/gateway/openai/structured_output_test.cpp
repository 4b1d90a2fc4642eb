// What a chat request's output is held to: the grammar spec for each
// response_format and forced tool choice, in each tool-call syntax, and the
// combinations refused by name. That a spec's grammar accepts exactly its
// language is engine/grammar's test; here, what the spec says.
#include "gateway/openai/structured_output.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "base/error.h"
#include "gateway/openai/chat_request.h"
#include "tests/gateway/openai/api_error_matchers.h"

namespace kvgate::openai {
namespace {

namespace json = boost::json;
using testing::error_of;

constexpr const char* kTools = R"("tools": [
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
  {"type": "function", "function": {"name": "now"}}])";

ChatCompletionRequest request(const std::string& extra) {
  return parse_chat_completion_request(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}], )" + extra +
                                       "}");
}

std::optional<OutputConstraint> constraint_of(const std::string& extra, ToolCallFormat syntax = ToolCallFormat::kHermes) {
  const ChatCompletionRequest r = request(extra);
  return output_constraint(r.response_format, r.tools, syntax);
}

TEST(StructuredOutput, FreeTextHasNoConstraint) {
  EXPECT_FALSE(constraint_of(R"("response_format": {"type": "text"})"));
  EXPECT_FALSE(constraint_of(std::string(kTools) + R"(, "tool_choice": "auto")"));
  EXPECT_FALSE(constraint_of(std::string(kTools) + R"(, "tool_choice": "none")"));
}

TEST(StructuredOutput, ResponseFormatsBecomeSchemaSpecs) {
  const auto object = constraint_of(R"("response_format": {"type": "json_object"})");
  ASSERT_TRUE(object);
  EXPECT_EQ(object->kind, OutputKind::kJsonObject);
  EXPECT_EQ(object->spec, json::parse(R"({"json_object": {}})"));
  const auto schema = constraint_of(
      R"("response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "integer"}}})");
  ASSERT_TRUE(schema);
  EXPECT_EQ(schema->kind, OutputKind::kJsonSchema);
  EXPECT_EQ(schema->spec, json::parse(R"({"json_schema": {"type": "integer"}})"));
  EXPECT_EQ(schema->field, "response_format.json_schema.schema");
  // With tools the model may not call, the format holds.
  const auto none = constraint_of(std::string(kTools) + R"(, "tool_choice": "none", "response_format": {"type": "json_object"})");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->kind, OutputKind::kJsonObject);
}

TEST(StructuredOutput, AForcedCallIsTheFamilysSyntaxAroundTheParameters) {
  const json::value weather_args = json::parse(
      R"({"json_schema": {"type": "object", "properties": {"city": {"type": "string"}}}})");
  auto call = [&](std::string open, json::value args, std::string close) {
    return json::value(json::object{
        {"sequence", json::array{json::object{{"literal", open}}, args, json::object{{"literal", close}}}}});
  };
  const json::value any_object = json::parse(R"({"json_object": {}})");

  const auto hermes = constraint_of(std::string(kTools) + R"(, "tool_choice": "required")");
  ASSERT_TRUE(hermes);
  EXPECT_EQ(hermes->kind, OutputKind::kToolCall);
  EXPECT_EQ(hermes->spec,
            (json::object{{"choice", json::array{call("<tool_call>\n{\"name\":\"get_weather\",\"arguments\":", weather_args,
                                                      "}\n</tool_call>"),
                                                 call("<tool_call>\n{\"name\":\"now\",\"arguments\":", any_object,
                                                      "}\n</tool_call>")}}}));

  const auto llama3 = constraint_of(
      std::string(kTools) + R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})",
      ToolCallFormat::kLlama3);
  ASSERT_TRUE(llama3);
  EXPECT_EQ(llama3->spec, (json::object{{"choice", json::array{call("{\"name\":\"get_weather\",\"parameters\":",
                                                                   weather_args, "}")}}}));

  const auto generic = constraint_of(std::string(kTools) +
                                         R"(, "tool_choice": {"type": "function", "function": {"name": "now"}},
                                             "response_format": {"type": "json_object"})",
                                     ToolCallFormat::kGeneric);
  ASSERT_TRUE(generic);  // a forced call wins over the format, which shapes the answer after it
  EXPECT_EQ(generic->kind, OutputKind::kToolCall);
  EXPECT_EQ(generic->spec, (json::object{{"choice", json::array{call("{\"name\":\"now\",\"arguments\":", any_object,
                                                                    "}")}}}));
}

// Mistral's and DeepSeek's calls are a choice of the ways their parser
// reads, and the spec names the format, whose marker control tokens the
// server then lets stand for their text.
TEST(StructuredOutput, AForcedCallWithControlTokenMarkersNamesItsFormat) {
  const json::value weather_args = json::parse(
      R"({"json_schema": {"type": "object", "properties": {"city": {"type": "string"}}}})");
  auto seq = [](json::array parts) { return json::value(json::object{{"sequence", std::move(parts)}}); };
  auto lit = [](std::string text) { return json::value(json::object{{"literal", std::move(text)}}); };
  const std::string named = std::string(kTools) + R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})";

  const auto mistral = constraint_of(named, ToolCallFormat::kMistral);
  ASSERT_TRUE(mistral);
  EXPECT_EQ(mistral->kind, OutputKind::kToolCall);
  const json::value mistral_call = json::object{
      {"choice", json::array{seq({lit("[TOOL_CALLS]get_weather[ARGS]"), weather_args}),
                             seq({lit("[TOOL_CALLS][{\"name\":\"get_weather\",\"arguments\":"), weather_args,
                                  lit("}]")})}}};
  EXPECT_EQ(mistral->spec, (json::object{{"tool_call_format", "mistral"},
                                         {"grammar", json::object{{"choice", json::array{mistral_call}}}}}));

  const auto deepseek = constraint_of(named, ToolCallFormat::kDeepSeek);
  ASSERT_TRUE(deepseek);
  const json::value deepseek_call = json::object{
      {"choice",
       json::array{seq({lit("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"),
                        weather_args, lit("\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>")}),
                   seq({lit("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"), weather_args,
                        lit("<｜tool▁call▁end｜><｜tool▁calls▁end｜>")})}}};
  EXPECT_EQ(deepseek->spec, (json::object{{"tool_call_format", "deepseek"},
                                          {"grammar", json::object{{"choice", json::array{deepseek_call}}}}}));

  // "required": one call to any of them, each its own choice of ways.
  const auto any = constraint_of(std::string(kTools) + R"(, "tool_choice": "required")", ToolCallFormat::kMistral);
  ASSERT_TRUE(any);
  EXPECT_EQ(any->spec.at("grammar").at("choice").as_array().size(), 2u);

  // The server reads the format beside the grammar; other specs are their own grammar.
  const MarkedGrammar m = marked_grammar(mistral->spec);
  EXPECT_EQ(m.markers, ToolCallFormat::kMistral);
  EXPECT_EQ(&m.grammar, &mistral->spec.at("grammar"));
  const json::value plain = json::parse(R"({"json_object": {}})");
  EXPECT_EQ(marked_grammar(plain).markers, std::nullopt);
  EXPECT_EQ(&marked_grammar(plain).grammar, &plain);
  EXPECT_THROW(marked_grammar(json::parse(R"({"tool_call_format": "nope", "grammar": {"json_object": {}}})")), Error);
  EXPECT_THROW(marked_grammar(json::parse(R"({"tool_call_format": "mistral"})")), Error);
}

TEST(StructuredOutput, WhatCannotBeConstrainedIsRefusedByName) {
  EXPECT_EQ(error_of([&] {
              constraint_of(std::string(kTools) + R"(, "response_format": {"type": "json_object"})");
            }).param,
            "response_format");
  EXPECT_EQ(error_of([&] {
              constraint_of(std::string(kTools) + R"(, "tool_choice": "required")", ToolCallFormat::kUnread);
            }).param,
            "tool_choice");
}

}  // namespace
}  // namespace kvgate::openai
