// Constrained decoding in the scheduler: on stories260K (whose free output
// is prose), every request held to a JSON schema returns compact JSON that
// an independent validator accepts and ends with finish stop, sampled or
// greedy, batched with free requests that it leaves unchanged; a literal
// around the value (a tool call's markup) is produced exactly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/error.h"
#include "engine/grammar/compose.h"
#include "engine/grammar/json_schema.h"
#include "engine/text/vocabulary_masker.h"
#include "tests/engine/grammar/schema_validator.h"
#include "tests/engine/sched/scheduler_support.h"

namespace kvgate {
namespace {

using namespace kvgate::sched_testing;
using prefix_testing::run_one;
namespace json = boost::json;

const Tokenizer& stories_tokenizer() {
  static const std::unique_ptr<Tokenizer> tok = [] {
    const auto f = GgufFile::open(testing::shared_path("models/stories260K.gguf"));
    return Tokenizer::from_gguf(*f);
  }();
  return *tok;
}

const std::shared_ptr<const grammar::TokenMasker>& masker() {
  static const auto m = vocabulary_masker(stories_tokenizer());
  return m;
}

Request constrained(const std::shared_ptr<const grammar::Grammar>& g, uint64_t seed, float temperature = 1.0f) {
  Request r;
  r.prompt = stories_tokenizer().encode("Once upon a time", {});
  r.sampling.temperature = temperature;
  r.sampling.seed = seed;
  r.max_tokens = 400;
  r.scope = cache::ScopeId{1, 1};
  r.output_grammar = grammar::OutputGrammar{g, masker()};
  return r;
}

// Small enough to close inside stories260K's 512-token context.
const char* const kSchemas[] = {
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"],"additionalProperties":false})",
    R"({"type":"array","items":{"enum":["red","green","blue"]},"minItems":1,"maxItems":4})",
    R"({"anyOf":[{"type":"boolean"},{"type":"object","properties":{"ok":{"const":true}},"required":["ok"],"additionalProperties":false}]})",
    R"({"$defs":{"p":{"type":"object","properties":{"x":{"type":"number","minimum":-5,"maximum":5}},"required":["x"],"additionalProperties":false}},"type":"array","items":{"$ref":"#/$defs/p"},"maxItems":3})",
    R"({"type":"object","properties":{"id":{"type":"string","format":"uuid"},"code":{"type":"string","pattern":"^[A-Z]{2}-[0-9]{3}$"}},"required":["id","code"],"additionalProperties":false})",
};

TEST(ConstrainedDecoding, EveryOutputValidatesAgainstItsSchemaSampledAndGreedy) {
  auto s = make_scheduler(stories());
  struct Run {
    size_t schema;
    std::shared_ptr<RequestStream> stream;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < std::size(kSchemas); ++i) {
    const auto g = grammar::compile_json_schema(std::string_view(kSchemas[i]));
    for (uint64_t seed = 0; seed < 6; ++seed)
      runs.push_back({i, s->submit(constrained(g, seed, seed == 0 ? 0.0f : 1.0f), {.tenant = seed % 2})});
  }
  drain(*s);
  for (const Run& r : runs) {
    SCOPED_TRACE(kSchemas[r.schema]);
    const RequestResult res = r.stream->wait().result;
    const std::string text = stories_tokenizer().decode(res.output);
    EXPECT_EQ(res.finish, FinishReason::kStop) << text;
    boost::system::error_code ec;
    const json::value v = json::parse(text, ec);
    ASSERT_FALSE(ec) << text;
    EXPECT_TRUE(testing::SchemaValidator(json::parse(kSchemas[r.schema])).valid(v)) << text;
  }
}

TEST(ConstrainedDecoding, FreeRequestsBatchedBesideConstrainedOnesAreUnchanged) {
  const std::vector<Request> free = workload(6, 7);
  std::vector<Tokens> want;
  for (const Request& r : free) want.push_back(alone(stories(), r));
  auto s = make_scheduler(stories());
  std::vector<std::shared_ptr<RequestStream>> streams;
  const auto g = grammar::compile_json_schema(std::string_view(kSchemas[0]));
  for (size_t i = 0; i < free.size(); ++i) {
    streams.push_back(s->submit(free[i], {}));
    s->submit(constrained(g, i), {});
  }
  drain(*s);
  for (size_t i = 0; i < free.size(); ++i) EXPECT_EQ(streams[i]->wait().result.output, want[i]) << i;
}

TEST(ConstrainedDecoding, LiteralMarkupAroundTheValueIsProducedExactly) {
  const auto args = grammar::compile_json_schema(std::string_view(
      R"({"type":"object","properties":{"city":{"type":"string","maxLength":10}},"required":["city"],"additionalProperties":false})"));
  const auto call = grammar::sequence({{"<tool_call>\n{\"name\":\"get_weather\",\"arguments\":", nullptr},
                                       {"", args},
                                       {"}\n</tool_call>", nullptr}});
  auto s = make_scheduler(stories());
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const RequestResult r = run_one(*s, constrained(call, seed));
    const std::string text = stories_tokenizer().decode(r.output);
    EXPECT_EQ(r.finish, FinishReason::kStop);
    ASSERT_TRUE(text.starts_with("<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"")) << text;
    ASSERT_TRUE(text.ends_with("\"}}\n</tool_call>")) << text;
  }
}

TEST(ConstrainedDecoding, EndsWhenTheValueIsWholeEvenWithIgnoreEos) {
  auto s = make_scheduler(stories());
  Request r = constrained(grammar::compile_json_schema(std::string_view(R"({"enum":["yes","no"]})")), 3);
  r.ignore_eos = true;
  const RequestResult res = run_one(*s, r);
  const std::string text = stories_tokenizer().decode(res.output);
  EXPECT_TRUE(text == "\"yes\"" || text == "\"no\"") << text;
  EXPECT_EQ(res.finish, FinishReason::kStop);
}

TEST(ConstrainedDecoding, MaxTokensCutsAnOpenValueWithFinishLength) {
  auto s = make_scheduler(stories());
  Request r = constrained(grammar::compile_json_schema(std::string_view(R"({"type":"string","minLength":50})")), 1);
  r.max_tokens = 5;
  const RequestResult res = run_one(*s, r);
  EXPECT_EQ(res.finish, FinishReason::kLength);
  EXPECT_EQ(res.output.size(), 5u);
}

TEST(ConstrainedDecoding, AGrammarOverAnotherVocabularyIsRefused) {
  auto s = make_scheduler(stories());
  Request r = constrained(grammar::compile_json_schema(std::string_view(R"({"type":"boolean"})")), 1);
  r.output_grammar->masker = std::make_shared<const grammar::TokenMasker>(std::vector<std::string>{"a", "b"}, 1);
  try {
    s->submit(r, {});
    FAIL() << "a masker of 2 tokens was accepted for a 512-token model";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocabulary has 2 tokens"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvgate
