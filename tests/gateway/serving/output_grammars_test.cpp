// A forced call in Mistral's and DeepSeek's syntaxes, whose markers are
// control tokens: its grammar is masked with those tokens standing for
// their text, so a marker token is allowed exactly where its text may come
// and nowhere else, and what the model writes with them reaches the
// tool-call parser (through ToolMarkerTokens) as a call. Other specs keep
// the plain masker, which never allows a control token.
#include "gateway/serving/output_grammars.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "engine/grammar/grammar_spec.h"
#include "engine/text/text_stream.h"
#include "engine/text/vocabulary_masker.h"
#include "gateway/openai/chat_request.h"
#include "gateway/openai/structured_output.h"
#include "gateway/openai/tool_call_parser.h"
#include "gateway/serving/tool_marker_tokens.h"
#include "tests/gateway/serving/marker_vocabulary.h"
#include "tests/temp_dir.h"

namespace kvgate::serving {
namespace {

namespace json = boost::json;
using openai::ToolCallFormat;

const std::vector<std::string> kControls = {
    "[TOOL_CALLS]",          "[ARGS]",           "[INST]",           "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"};

using Vocabulary = kvgate::testing::MarkerVocabulary;

Vocabulary gpt2_vocabulary(const std::vector<std::string>& controls, kvgate::testing::TempDir& dir) {
  return kvgate::testing::marker_vocabulary("ggml-vocab-gpt-2.gguf", controls, dir);
}

// The spec of a request forcing get_weather in `syntax`.
json::value forced_call(ToolCallFormat syntax) {
  const openai::ChatCompletionRequest r = openai::parse_chat_completion_request(R"({
    "model": "m", "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "get_weather",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}}})");
  return openai::output_constraint(r.response_format, r.tools, syntax)->spec;
}

class ForcedMarkedCall : public ::testing::Test {
 protected:
  void SetUp() override {
    v_ = gpt2_vocabulary(kControls, dir_);
    grammars_ = std::make_unique<OutputGrammars>(*v_.tokenizer);
  }
  const Tokenizer& tok() const { return *v_.tokenizer; }
  TokenId id(std::string_view text) const { return tok().vocab().find(text); }
  Tokens ordinary(std::string_view text) const { return tok().encode(text, {.add_bos = false}); }
  // The control tokens the mask allows now.
  std::vector<std::string> allowed_controls(const grammar::OutputGrammar& g, const grammar::Matcher& m) const {
    const grammar::TokenMask mask = g.masker->mask(m);
    std::vector<std::string> out;
    for (const std::string& c : kControls)
      if (mask.test(id(c))) out.push_back(c);
    return out;
  }
  // Feeds `ids` to a fresh matcher of `g`, checking the control tokens
  // allowed before each: `expect[i]` before ids[i].
  void walk(const grammar::OutputGrammar& g, const Tokens& ids, const std::vector<std::vector<std::string>>& expect) {
    grammar::Matcher m(g.grammar);
    for (size_t i = 0; i < ids.size(); ++i) {
      SCOPED_TRACE("token " + std::to_string(i) + ": '" + std::string(tok().piece(ids[i])) + "'");
      EXPECT_EQ(allowed_controls(g, m), expect[i]);
      ASSERT_TRUE(g.masker->accept_token(m, ids[i]));
    }
    EXPECT_TRUE(m.complete());
    EXPECT_FALSE(m.can_continue());
  }
  // The reply `ids` as a tool request's parser reads it.
  openai::ToolReply read(ToolCallFormat format, const Tokens& ids) const {
    const ToolMarkerTokens markers(tok(), openai::tool_call_markers(format));
    TextStream text(tok(), {}, false);
    std::string out;
    for (TokenId i : ids) {
      if (const Tokens* shown = markers.text_of(i)) {
        for (TokenId s : *shown) out += text.push(s);
      } else {
        out += text.push(i);
      }
    }
    out += text.finish(FinishReason::kStop);
    return openai::parse_tool_reply({format, "call_x_", {"get_weather"}, true}, out);
  }

  kvgate::testing::TempDir dir_;
  Vocabulary v_;
  std::unique_ptr<OutputGrammars> grammars_;
};

Tokens operator+(Tokens a, const Tokens& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(ForcedMarkedCall, MistralMarkersAreAllowedWhereTheirTextMayCome) {
  const grammar::OutputGrammar g = grammars_->compile(forced_call(ToolCallFormat::kMistral));
  EXPECT_EQ(g.masker->vocab_size(), static_cast<size_t>(tok().n_vocab()));
  const Tokens name = ordinary("get_weather"), args = ordinary(R"({"city":"Paris"})");
  // [TOOL_CALLS]get_weather[ARGS]{"city":"Paris"}: [ARGS] only after the
  // whole name; [INST], another control token, never.
  const Tokens ids = Tokens{id("[TOOL_CALLS]")} + name + Tokens{id("[ARGS]")} + args;
  std::vector<std::vector<std::string>> expect(ids.size());
  expect[0] = {"[TOOL_CALLS]"};
  expect[1 + name.size()] = {"[ARGS]"};
  walk(g, ids, expect);
  const openai::ToolReply reply = read(ToolCallFormat::kMistral, ids);
  ASSERT_EQ(reply.calls.size(), 1u);
  EXPECT_EQ(reply.calls[0].name, "get_weather");
  EXPECT_EQ(reply.calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(reply.content, "");

  // Nemo's way: [TOOL_CALLS][{"name":"get_weather","arguments":{...}}], no [ARGS].
  const Tokens nemo = Tokens{id("[TOOL_CALLS]")} + ordinary(R"([{"name":"get_weather","arguments":{"city":"Paris"}}])");
  expect.assign(nemo.size(), {});
  expect[0] = {"[TOOL_CALLS]"};
  walk(g, nemo, expect);
  EXPECT_EQ(read(ToolCallFormat::kMistral, nemo).calls.size(), 1u);

  // A marker is its token, never its text spelled with ordinary ones.
  grammar::Matcher m(g.grammar);
  EXPECT_FALSE(g.masker->accept_token(m, ordinary("[")[0]));
}

TEST_F(ForcedMarkedCall, DeepSeekMarkersAreAllowedWhereTheirTextMayCome) {
  const grammar::OutputGrammar g = grammars_->compile(forced_call(ToolCallFormat::kDeepSeek));
  const Tokens name = ordinary("get_weather"), args = ordinary(R"({"city":"Paris"})");
  // V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
  const Tokens v31 = Tokens{id("<｜tool▁calls▁begin｜>"), id("<｜tool▁call▁begin｜>")} + name +
                     Tokens{id("<｜tool▁sep｜>")} + args +
                     Tokens{id("<｜tool▁call▁end｜>"), id("<｜tool▁calls▁end｜>")};
  std::vector<std::vector<std::string>> expect(v31.size());
  expect[0] = {"<｜tool▁calls▁begin｜>"};
  expect[1] = {"<｜tool▁call▁begin｜>"};
  expect[2 + name.size()] = {"<｜tool▁sep｜>"};
  expect[3 + name.size() + args.size()] = {"<｜tool▁call▁end｜>"};
  expect[4 + name.size() + args.size()] = {"<｜tool▁calls▁end｜>"};
  walk(g, v31, expect);
  openai::ToolReply reply = read(ToolCallFormat::kDeepSeek, v31);
  ASSERT_EQ(reply.calls.size(), 1u);
  EXPECT_EQ(reply.calls[0].arguments, R"({"city":"Paris"})");

  // V3 and R1: "function", then the name and the arguments fenced as json.
  const Tokens fn = ordinary("function"), fenced = ordinary("get_weather\n```json\n{\"city\":\"Paris\"}\n```");
  const Tokens v3 = Tokens{id("<｜tool▁calls▁begin｜>"), id("<｜tool▁call▁begin｜>")} + fn +
                    Tokens{id("<｜tool▁sep｜>")} + fenced +
                    Tokens{id("<｜tool▁call▁end｜>"), id("<｜tool▁calls▁end｜>")};
  expect.assign(v3.size(), {});
  expect[0] = {"<｜tool▁calls▁begin｜>"};
  expect[1] = {"<｜tool▁call▁begin｜>"};
  expect[2 + fn.size()] = {"<｜tool▁sep｜>"};
  expect[3 + fn.size() + fenced.size()] = {"<｜tool▁call▁end｜>"};
  expect[4 + fn.size() + fenced.size()] = {"<｜tool▁calls▁end｜>"};
  walk(g, v3, expect);
  reply = read(ToolCallFormat::kDeepSeek, v3);
  ASSERT_EQ(reply.calls.size(), 1u);
  EXPECT_EQ(reply.calls[0].name, "get_weather");
  EXPECT_EQ(reply.calls[0].arguments, R"({"city":"Paris"})");
}

TEST_F(ForcedMarkedCall, OtherSpecsNeverAllowAControlToken) {
  // A literal that spells a marker, without the format: ordinary tokens only.
  const grammar::OutputGrammar plain = grammars_->compile(json::parse(R"({"literal": "[TOOL_CALLS]x"})"));
  grammar::Matcher m(plain.grammar);
  EXPECT_EQ(allowed_controls(plain, m), std::vector<std::string>{});
  EXPECT_TRUE(plain.masker->accept_token(m, ordinary("[")[0]));
  // And a format's masker allows its own markers only.
  const grammar::OutputGrammar mistral = grammars_->compile(forced_call(ToolCallFormat::kMistral));
  const grammar::OutputGrammar deepseek = grammars_->compile(forced_call(ToolCallFormat::kDeepSeek));
  EXPECT_NE(mistral.masker, plain.masker);
  EXPECT_NE(mistral.masker, deepseek.masker);
  const json::value literal_of_both = json::parse(R"({"choice": [{"literal": "[TOOL_CALLS]"}, {"literal": "<｜tool▁sep｜>"}]})");
  const grammar::OutputGrammar mixed =
      grammars_->compile(json::object{{"tool_call_format", "deepseek"}, {"grammar", literal_of_both}});
  EXPECT_EQ(mixed.masker, deepseek.masker);  // one masker per format
  EXPECT_EQ(allowed_controls(mixed, grammar::Matcher(mixed.grammar)), std::vector<std::string>{"<｜tool▁sep｜>"});
}

TEST_F(ForcedMarkedCall, AReplicaCompilesTheSameFromTheSpecsText) {
  const grammar::OutputGrammar front = grammars_->compile(forced_call(ToolCallFormat::kMistral));
  const grammar::OutputGrammar replica = grammars_->compile(std::string_view(front.spec));
  EXPECT_EQ(replica.masker, front.masker);
  EXPECT_EQ(replica.grammar, front.grammar);  // cached by the grammar proper
  EXPECT_EQ(replica.spec, front.spec);
  EXPECT_THROW(grammars_->compile(std::string_view(R"({"tool_call_format": "hermes2", "grammar": {"json_object": {}}})")),
               Error);
}

TEST(OutputGrammars, AVocabularyWithoutMarkerTokensSharesThePlainMasker) {
  kvgate::testing::TempDir dir;
  const Vocabulary v = gpt2_vocabulary({"[INST]"}, dir);
  OutputGrammars grammars(*v.tokenizer);
  const grammar::OutputGrammar call = grammars.compile(forced_call(ToolCallFormat::kMistral));
  const grammar::OutputGrammar object = grammars.compile(json::parse(R"({"json_object": {}})"));
  EXPECT_EQ(call.masker, object.masker);
}

TEST(VocabularyMasker, AMarkerTokenIsAllowedWhereTheGrammarWritesItOnly) {
  kvgate::testing::TempDir dir;
  const Vocabulary v = gpt2_vocabulary({"[TOOL_CALLS]", "[INST]"}, dir);
  const Tokenizer& tok = *v.tokenizer;
  const std::string_view markers[] = {"[TOOL_CALLS]", "[INST]x", "hello"};
  const auto masker = vocabulary_masker(tok, markers);
  EXPECT_EQ(masker->vocab_size(), static_cast<size_t>(tok.n_vocab()));
  const TokenId calls = tok.vocab().find("[TOOL_CALLS]"), inst = tok.vocab().find("[INST]");
  auto allowed = [&](const json::value& spec, std::string_view before = "") {
    grammar::Matcher m(grammar::compile_spec(spec));
    EXPECT_TRUE(m.accept(before));
    return masker->mask(m);
  };
  auto literal = [](const std::string& text) { return json::value{{"literal", text}}; };
  EXPECT_TRUE(allowed(literal(marker_bytes("[TOOL_CALLS]") + "x")).test(calls));
  EXPECT_FALSE(allowed(literal(marker_bytes("[TOOL_CALLS]") + "x")).test(inst));
  // Not a marker ("[INST]x" is not its text): a control token, never allowed.
  EXPECT_FALSE(allowed(literal(marker_bytes("[INST]"))).test(inst));
  // Its text is text: spelled with ordinary tokens, and where a JSON string
  // may hold it, the token is not allowed.
  EXPECT_FALSE(allowed(literal("[TOOL_CALLS]")).test(calls));
  EXPECT_TRUE(allowed(literal("[TOOL_CALLS]")).test(tok.encode("[", {.add_bos = false})[0]));
  const grammar::TokenMask in_string = allowed(json::parse(R"({"json_schema": {"type": "string"}})"), "\"");
  EXPECT_FALSE(in_string.test(calls));
  EXPECT_TRUE(in_string.test(tok.encode("[", {.add_bos = false})[0]));
  // No other token spells a marker's bytes: the byte tokens of 0xFF are banned.
  TokenId ff = kNoToken;
  for (TokenId id = 0; id < tok.n_vocab(); ++id)
    if (tok.token_bytes(id) == "\xFF") ff = id;
  ASSERT_NE(ff, kNoToken);
  EXPECT_FALSE(allowed(literal(marker_bytes("[TOOL_CALLS]"))).test(ff));
  EXPECT_TRUE(vocabulary_masker(tok)->mask(grammar::Matcher(grammar::compile_spec(literal("\xFF")))).test(ff));
}

}  // namespace
}  // namespace kvgate::serving
