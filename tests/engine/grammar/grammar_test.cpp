// engine/grammar: schemas compiled to grammars, matched byte by byte and
// turned into token masks. Outputs sampled at random under the mask (over
// GPT-2's real vocabulary and over a synthetic one) must close, parse and
// validate against their schema by an independent validator.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "base/error.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/grammar/json_schema.h"
#include "engine/grammar/matcher.h"
#include "engine/grammar/token_mask.h"
#include "tests/engine/grammar/gpt2_vocab.h"
#include "tests/engine/grammar/schema_validator.h"
#include "tests/shared_data.h"

namespace kvgate::grammar {
namespace {

namespace json = boost::json;

const testing::ByteVocab& gpt2() {
  static const testing::ByteVocab v = testing::load_gpt2_byte_vocab(testing::shared_path("testdata/ggml-vocab-gpt-2.gguf"));
  return v;
}

// Every byte, JSON's multi-character pieces, multi-byte characters, an
// empty token, a special token and EOS.
const testing::ByteVocab& synthetic() {
  static const testing::ByteVocab v = [] {
    testing::ByteVocab s;
    for (int b = 0; b < 256; ++b) s.tokens.push_back(std::string(1, static_cast<char>(b)));
    for (const char* t : {"{\"", "\":", "\",", "\"}", "},", "],", "[{", "}]", "true", "false", "null", "12", "00",
                          "-1", ".5", "e+", "abc", "name", "\\n", "\\u00", "\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC",
                          "\":\"", "\",\"", "2024-", "-0", "T1", ":00", "Z\"", "@", ".com", "red", "\"red\"", "ab\"",
                          "\"}]", "]}", "\"]", "\xF0\x9F\x98\x80"})
      s.tokens.push_back(t);
    s.tokens.push_back("");
    s.tokens.push_back("<|special|>");
    s.special.push_back(static_cast<TokenId>(s.tokens.size() - 1));
    s.tokens.push_back("<|eos|>");
    s.eos = static_cast<TokenId>(s.tokens.size() - 1);
    return s;
  }();
  return v;
}

struct Case {
  const char* name;
  const char* schema;
};

const Case kSchemas[] = {
    {"flat_object", R"({"type":"object","properties":{"name":{"type":"string","maxLength":20},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"],"additionalProperties":false})"},
    {"nested", R"({"type":"object","properties":{"user":{"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string","maxLength":8},"maxItems":3}},"required":["id","tags"]},"active":{"type":"boolean"}},"required":["user"]})"},
    {"array_bounds", R"({"type":"array","items":{"type":"number"},"minItems":2,"maxItems":5})"},
    {"enum_strings", R"({"enum":["red","green","blue","reddish"]})"},
    {"enum_mixed", R"({"enum":[1,"a",null,true,{"x":1},[2,3]]})"},
    {"const", R"({"type":"object","properties":{"v":{"const":"fixed"},"n":{"const":42}},"required":["v","n"]})"},
    {"any_of", R"({"anyOf":[{"type":"string","maxLength":5},{"type":"integer"},{"type":"null"}]})"},
    {"one_of_tagged", R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"a":{"type":"integer"}},"required":["kind","a"]},{"type":"object","properties":{"kind":{"const":"b"},"b":{"type":"string","maxLength":4}},"required":["kind","b"]}]})"},
    {"ref_defs", R"({"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},"type":"object","properties":{"from":{"$ref":"#/$defs/point"},"to":{"$ref":"#/$defs/point"}},"required":["from","to"]})"},
    {"ref_recursive", R"({"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer","minimum":0,"maximum":9},"children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["value"]}},"$ref":"#/$defs/node"})"},
    {"definitions", R"({"definitions":{"c":{"enum":["x","y"]}},"type":"array","items":{"$ref":"#/definitions/c"},"minItems":1,"maxItems":4})"},
    {"pattern_code", R"({"type":"string","pattern":"^[A-Z]{2}-\\d{3,5}$"})"},
    {"pattern_groups", R"({"type":"string","pattern":"^(foo|bar)+(_[a-z]{1,3})?$","maxLength":12})"},
    {"pattern_classes", R"({"type":"string","pattern":"^[^\\s\"]+\\.(txt|md)$","maxLength":16})"},
    {"format_date", R"({"type":"string","format":"date"})"},
    {"format_date_time", R"({"type":"string","format":"date-time"})"},
    {"format_uuid", R"({"type":"string","format":"uuid"})"},
    {"format_email", R"({"type":"string","format":"email"})"},
    {"int_bounds", R"({"type":"integer","exclusiveMinimum":-50,"maximum":1234})"},
    {"int_negative", R"({"type":"integer","minimum":-1000,"maximum":-7})"},
    {"optional_shared_prefix", R"({"type":"object","properties":{"nam":{"type":"integer"},"name":{"type":"string","maxLength":3},"namespace":{"type":"boolean"}}})"},
    {"nullable_string", R"({"type":["string","null"],"minLength":2,"maxLength":4})"},
    {"string_lengths", R"({"type":"string","minLength":3,"maxLength":6})"},
    {"number_bounds", R"({"type":"number","minimum":0.5,"maximum":10})"},
    {"array_of_objects", R"({"type":"array","items":{"type":"object","properties":{"id":{"type":"integer","minimum":1,"maximum":99},"ok":{"type":"boolean"}},"required":["id"]},"maxItems":3})"},
};

std::shared_ptr<const Grammar> compile(const char* schema) { return compile_json_schema(std::string_view(schema)); }

// Picks allowed tokens uniformly until EOS; the text, or a failure.
::testing::AssertionResult generate(const std::shared_ptr<const Grammar>& g, const TokenMasker& masker,
                                    const testing::ByteVocab& vocab, std::mt19937& rng, std::string& text,
                                    size_t max_steps) {
  Matcher m(g);
  text.clear();
  TokenMask mask;
  std::vector<TokenId> allowed;
  for (size_t step = 0; step < max_steps; ++step) {
    masker.fill(m, mask);
    allowed.clear();
    for (size_t id = 0; id < mask.size(); ++id)
      if (mask.test(static_cast<TokenId>(id))) allowed.push_back(static_cast<TokenId>(id));
    if (allowed.empty()) return ::testing::AssertionFailure() << "stuck after " << text;
    const TokenId id = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
    if (id == vocab.eos) {
      if (!m.complete()) return ::testing::AssertionFailure() << "EOS allowed while incomplete: " << text;
      return ::testing::AssertionSuccess();
    }
    if (!masker.accept_token(m, id)) return ::testing::AssertionFailure() << "masked-in token refused: " << text;
    text += vocab.tokens[static_cast<size_t>(id)];
  }
  return ::testing::AssertionFailure() << "no end within " << max_steps << " tokens: " << text;
}

// No whitespace outside strings.
bool compact(std::string_view text) {
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      return false;
    }
  }
  return true;
}

void check_generated(const Case& c, const testing::ByteVocab& vocab, int outputs, uint32_t seed) {
  SCOPED_TRACE(c.name);
  const auto g = compile(c.schema);
  const TokenMasker masker(vocab.tokens, vocab.eos, vocab.special);
  const json::value schema = json::parse(c.schema);
  const testing::SchemaValidator validator(schema);
  std::mt19937 rng(seed);
  for (int i = 0; i < outputs; ++i) {
    std::string text;
    ASSERT_TRUE(generate(g, masker, vocab, rng, text, 4000));
    boost::system::error_code ec;
    const json::value v = json::parse(text, ec);
    ASSERT_FALSE(ec) << text;
    EXPECT_TRUE(validator.valid(v)) << text;
    EXPECT_TRUE(compact(text)) << text;
  }
}

TEST(GrammarGenerate, SyntheticVocabularyOutputsCloseParseAndValidate) {
  uint32_t seed = 1;
  for (const Case& c : kSchemas) check_generated(c, synthetic(), 12, seed++);
}

TEST(GrammarGenerate, Gpt2VocabularyOutputsCloseParseAndValidate) {
  uint32_t seed = 100;
  for (const Case& c : kSchemas) check_generated(c, gpt2(), 3, seed++);
}

TEST(GrammarGenerate, JsonObjectModeGivesAnObject) {
  SchemaCaps caps;
  caps.max_items = 4;
  caps.max_nesting = 3;
  caps.max_string_chars = 12;
  const auto g = compile_any_json_object(caps);
  const TokenMasker masker(synthetic().tokens, synthetic().eos, synthetic().special);
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    std::string text;
    ASSERT_TRUE(generate(g, masker, synthetic(), rng, text, 4000));
    const json::value v = json::parse(text);
    EXPECT_TRUE(v.is_object()) << text;
  }
}

// The index of the first byte refused, or -1 when all are read.
int first_refused(Matcher& m, std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i)
    if (!m.accept(static_cast<uint8_t>(text[i]))) return static_cast<int>(i);
  return -1;
}

void expect_valid(const char* schema, std::string_view text) {
  Matcher m(compile(schema));
  EXPECT_EQ(first_refused(m, text), -1) << schema << " / " << text;
  EXPECT_TRUE(m.complete()) << schema << " / " << text;
}

void expect_refused_at(const char* schema, std::string_view text, int at) {
  Matcher m(compile(schema));
  EXPECT_EQ(first_refused(m, text), at) << schema << " / " << text;
}

TEST(GrammarMatch, KnownValidTextsAreAccepted) {
  expect_valid(kSchemas[0].schema, R"({"name":"Ann","age":33})");
  expect_valid(kSchemas[0].schema, R"({"name":"caf\u00e9 \"x\" \\ \n é 日本 😀","age":0})");
  expect_valid(kSchemas[1].schema, R"({"user":{"id":-12,"tags":["a","bc"]},"active":false})");
  expect_valid(kSchemas[1].schema, R"({"user":{"id":0,"tags":[]}})");
  expect_valid(kSchemas[2].schema, R"([1,-2.5,3e10,0.001,-0])");
  expect_valid(kSchemas[3].schema, R"("reddish")");
  expect_valid(kSchemas[3].schema, R"("red")");
  expect_valid(kSchemas[4].schema, R"({"x":1})");
  expect_valid(kSchemas[6].schema, R"(-42)");
  expect_valid(kSchemas[6].schema, R"("hey")");
  expect_valid(kSchemas[9].schema, R"({"value":1,"children":[{"value":2},{"value":3,"children":[]}]})");
  expect_valid(kSchemas[11].schema, R"("AB-1234")");
  expect_valid(kSchemas[12].schema, R"("foobarfoo_ab")");
  expect_valid(kSchemas[14].schema, R"("2024-02-28")");
  expect_valid(kSchemas[15].schema, R"("2024-12-31T23:59:59.123+05:30")");
  expect_valid(kSchemas[16].schema, R"("123e4567-e89b-12d3-a456-426614174000")");
  expect_valid(kSchemas[17].schema, R"("john.doe@mail.example.com")");
  expect_valid(kSchemas[18].schema, R"(-49)");
  expect_valid(kSchemas[18].schema, R"(1234)");
  expect_valid(kSchemas[19].schema, R"(-7)");
  expect_valid(kSchemas[20].schema, R"({"nam":1,"namespace":true})");
  expect_valid(kSchemas[20].schema, R"({})");
  expect_valid(kSchemas[21].schema, R"(null)");
  expect_valid(kSchemas[23].schema, R"(10)");
}

TEST(GrammarMatch, InvalidTextsAreRefusedAtTheFirstWrongByte) {
  expect_refused_at(kSchemas[0].schema, R"({"age":3)", 2);                       // properties in order: name first
  expect_refused_at(kSchemas[0].schema, R"({"name":"a","age":121})", 20);        // 12x > 120
  expect_refused_at(kSchemas[0].schema, R"({"name":"a","age":01})", 19);         // leading zero
  expect_refused_at(kSchemas[0].schema, "{\"name\":\"a\x01", 10);                // raw control character
  expect_refused_at(kSchemas[0].schema, "{\"name\":\"\xC3\x28", 10);             // broken UTF-8
  expect_refused_at(kSchemas[0].schema, "{\"name\":\"\xED\xA0\x80", 10);         // a surrogate in UTF-8
  expect_refused_at(kSchemas[0].schema, R"({"name":"\ud800)", 12);               // lone surrogate escape
  expect_refused_at(kSchemas[0].schema, R"({ "name")", 1);                       // no whitespace
  expect_refused_at(kSchemas[0].schema, R"({"name":"123456789012345678901)", 29);  // maxLength 20
  expect_refused_at(kSchemas[2].schema, R"([1])", 2);                            // minItems 2
  expect_refused_at(kSchemas[2].schema, R"([1,2,3,4,5,6)", 10);                  // maxItems 5
  expect_refused_at(kSchemas[3].schema, R"("redd")", 5);
  expect_refused_at(kSchemas[11].schema, R"("Ab-123")", 2);
  expect_refused_at(kSchemas[11].schema, R"("AB-12")", 6);
  expect_refused_at(kSchemas[14].schema, R"("2023-02-30")", 9);
  expect_refused_at(kSchemas[14].schema, R"("2023-13-01")", 7);
  expect_refused_at(kSchemas[18].schema, R"(-50)", 2);
  expect_refused_at(kSchemas[18].schema, R"(1235)", 3);
  expect_refused_at(kSchemas[19].schema, R"(-0)", 1);
  expect_refused_at(kSchemas[19].schema, R"(-1001)", 4);
  expect_refused_at(kSchemas[19].schema, R"(5)", 0);
  expect_refused_at(kSchemas[21].schema, R"("a")", 2);                           // minLength 2
  expect_refused_at(kSchemas[22].schema, R"("abcdefg")", 7);                     // maxLength 6
  expect_refused_at(kSchemas[9].schema, R"({"value":10)", 10);
  Matcher m(compile(kSchemas[0].schema));
  EXPECT_FALSE(m.complete());
  EXPECT_TRUE(m.can_continue());
  ASSERT_TRUE(m.accept(R"({"name":"","age":120})"));
  EXPECT_TRUE(m.complete());
  EXPECT_FALSE(m.can_continue());
}

TEST(GrammarMatch, RecursionEndsAtTheDepthCap) {
  SchemaCaps caps;
  caps.max_ref_depth = 2;
  const auto g = compile_json_schema(std::string_view(kSchemas[9].schema), caps);
  Matcher m(g);
  EXPECT_TRUE(m.accept(R"({"value":1,"children":[{"value":2,"children":[)"));
  EXPECT_FALSE(m.accept('{'));  // a third level of nodes is past the cap
  EXPECT_TRUE(m.accept("]}]}"));
  EXPECT_TRUE(m.complete());
}

TEST(GrammarSchema, UnsupportedKeywordsAreRefusedByNameAndPath) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"type":"object","patternProperties":{"^a":{}}})", "\"patternProperties\" at #/patternProperties"},
      {R"({"type":"object","properties":{"a":{"if":{},"then":{}}}})", "\"if\" at #/properties/a/if"},
      {R"({"not":{"type":"string"}})", "\"not\" at #/not"},
      {R"({"type":"object","dependentSchemas":{}})", "\"dependentSchemas\" at #/dependentSchemas"},
      {R"({"type":"array","items":{"$ref":"https://example.com/s.json"}})", "\"$ref\" at #/items/$ref"},
      {R"({"type":"array","uniqueItems":true})", "\"uniqueItems\" at #/uniqueItems"},
      {R"({"type":"number","multipleOf":3})", "\"multipleOf\" at #/multipleOf"},
      {R"({"type":"string","format":"hostname"})", "\"format\" at #/format"},
      {R"({"allOf":[{"type":"string"},{"maxLength":3}]})", "\"allOf\" at #/allOf"},
      {R"({"type":"array","prefixItems":[{"type":"string"}]})", "\"prefixItems\" at #/prefixItems"},
      {R"({"type":"object","properties":{"a~b/c":{"minProperties":1}}})", "\"minProperties\" at #/properties/a~0b~1c/minProperties"},
      {R"({"type":"string","pattern":"(?=a)b"})", "pattern at #/pattern"},
      {R"({"type":"string","pattern":"(a)\\1"})", "pattern at #/pattern"},
      {R"({"type":"string","pattern":"a++"})", "a quantifier after a quantifier"},
      {R"({"type":"string","pattern":"(a{1000}){1000}"})", "too complex"},
  };
  for (const auto& [schema, expected] : cases) {
    try {
      compile(schema);
      ADD_FAILURE() << "accepted: " << schema;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  // Over the size limit, before anything else is read.
  std::string big = R"({"enum":[)";
  while (big.size() < (1u << 20)) big += R"("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",)";
  big += "1]}";
  EXPECT_THROW(compile(big.c_str()), Error);
  // A pattern whose automaton blows up (".*" then many ".": every state's
  // set stays large) is refused quickly, not built for seconds (found by
  // the fuzzer).
  try {
    compile((R"({"type":"string","pattern":"a.*)" + std::string(60, '.') + R"(b"})").c_str());
    ADD_FAILURE() << "built";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too complex"), std::string::npos) << e.what();
  }
  // Nothing satisfies: refused rather than a grammar that gets stuck.
  EXPECT_THROW(compile(R"({"type":"string","minLength":5,"maxLength":2})"), Error);
  EXPECT_THROW(compile(R"({"$defs":{"a":{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"required":["a"]}},"$ref":"#/$defs/a"})"), Error);
}

TEST(GrammarMask, MaskAgreesWithFeedingEachTokensBytes) {
  const auto& vocab = gpt2();
  const TokenMasker masker(vocab.tokens, vocab.eos, vocab.special);
  std::mt19937 rng(5);
  // Three schemas of different kinds (an object tree, a pattern, shared key
  // prefixes) at six states each: every one of GPT-2's tokens is checked at
  // each, which is what costs (about 15 s under ASan at five and twelve).
  for (const char* name : {"nested", "pattern_groups", "optional_shared_prefix"}) {
    const Case* c = nullptr;
    for (const Case& k : kSchemas)
      if (std::string_view(k.name) == name) c = &k;
    ASSERT_NE(c, nullptr);
    const auto g = compile(c->schema);
    Matcher m(g);
    // States along one sampled output.
    for (int step = 0; step < 6; ++step) {
      const TokenMask mask = masker.mask(m);
      std::vector<TokenId> allowed;
      for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        const auto tid = static_cast<TokenId>(id);
        bool expected;
        if (tid == vocab.eos) {
          expected = m.complete();
        } else if (vocab.tokens[id].empty() ||
                   std::find(vocab.special.begin(), vocab.special.end(), tid) != vocab.special.end()) {
          expected = false;
        } else {
          Matcher copy = m;
          expected = copy.accept(vocab.tokens[id]);
        }
        ASSERT_EQ(mask.test(tid), expected) << name << " token " << id << " '" << vocab.tokens[id] << "'";
        if (expected && tid != vocab.eos) allowed.push_back(tid);
      }
      if (allowed.empty()) break;
      ASSERT_TRUE(masker.accept_token(m, allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)]));
    }
  }
}

TEST(GrammarMask, EmptyAndSpecialTokensNeverAndEosOnlyWhenComplete) {
  const auto& v = synthetic();
  const TokenMasker masker(v.tokens, v.eos, v.special);
  Matcher m(compile(R"({"type":"string","maxLength":3})"));
  TokenMask mask = masker.mask(m);
  EXPECT_FALSE(mask.test(v.eos));
  EXPECT_FALSE(mask.test(v.special[0]));
  EXPECT_FALSE(mask.test(static_cast<TokenId>(v.tokens.size() - 3)));  // ""
  EXPECT_TRUE(mask.test('"'));
  ASSERT_TRUE(masker.accept_token(m, '"'));
  EXPECT_FALSE(masker.accept_token(m, v.eos));
  ASSERT_TRUE(m.accept("ab\""));
  mask = masker.mask(m);
  EXPECT_TRUE(mask.test(v.eos));
  EXPECT_EQ(mask.count(), 1u);
}

// The mask cache returns what a walk of the trie computes, for the same
// grammar and threads only: a second grammar at the same state misses, and
// a cache too small for every state evicts and recomputes.
TEST(GrammarMask, CachedMasksAreTheMasksOfTheirGrammarAndState) {
  const auto& v = synthetic();
  const TokenMasker plain(v.tokens, v.eos, v.special);
  const TokenMasker cached(v.tokens, v.eos, v.special, size_t{1} << 20);
  const TokenMasker tiny(v.tokens, v.eos, v.special, 1000);  // room for a few masks of this small vocabulary
  const auto a = compile(R"({"type":"object","properties":{"s":{"type":"string","maxLength":6}},"required":["s"],"additionalProperties":false})");
  const auto b = compile(R"({"type":"object","properties":{"s":{"type":"string","maxLength":6}},"required":["s"],"additionalProperties":false})");
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& g : {a, b}) {
      Matcher m(g);
      for (const char* piece : {"{", "\"s\"", ":", "\"", "ab", "cd", "\"", "}"}) {
        ASSERT_EQ(cached.mask(m).words(), plain.mask(m).words()) << piece;
        ASSERT_EQ(tiny.mask(m).words(), plain.mask(m).words()) << piece;
        ASSERT_TRUE(m.accept(std::string_view(piece))) << piece;
      }
    }
  }
  // Each state of each grammar was computed once and read back on the second pass.
  EXPECT_EQ(cached.cache_misses(), 16u);
  EXPECT_EQ(cached.cache_hits(), 16u);
  EXPECT_EQ(tiny.cache_hits() + tiny.cache_misses(), 32u);
  EXPECT_GT(tiny.cache_misses(), 16u);  // it could not keep them all
}

json::value schema_spec(std::string_view schema) { return json::object{{"json_schema", json::parse(schema)}}; }

TEST(GrammarCacheTest, CompilesOncePerCanonicalText) {
  GrammarCache cache(2);
  const auto a = cache.get(schema_spec(R"({"type": "string"})"));
  const auto b = cache.get(schema_spec(R"({"type":"string"})"));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(cache.hits(), 1u);
  const auto c = cache.get(schema_spec(R"({"type":"integer"})"));
  EXPECT_NE(a.get(), c.get());
  cache.get(schema_spec(R"({"type":"boolean"})"));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_THROW(cache.get(schema_spec(R"({"not":{}})")), Error);
  const json::value any = json::parse(R"({"json_object":{}})");
  EXPECT_EQ(cache.get(any).get(), cache.get(any).get());
}

// What a grammar spec accepts, byte for byte.
bool spec_accepts(std::string_view spec, std::string_view text) {
  Matcher m(compile_spec(json::parse(spec)));
  return m.accept(text) && m.complete();
}

TEST(GrammarSpecTest, ComposesLiteralsSchemasAndChoices) {
  const char* call = R"({"choice":[
      {"sequence":[{"literal":"<tool_call>\n{\"name\":\"a\",\"arguments\":"},
                   {"json_schema":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"],"additionalProperties":false}},
                   {"literal":"}\n</tool_call>"}]},
      {"sequence":[{"literal":"<tool_call>\n{\"name\":\"b\",\"arguments\":"},{"json_object":{}},{"literal":"}\n</tool_call>"}]}]})";
  EXPECT_TRUE(spec_accepts(call, R"(<tool_call>
{"name":"a","arguments":{"x":12}}
</tool_call>)"));
  EXPECT_TRUE(spec_accepts(call, R"(<tool_call>
{"name":"b","arguments":{"q":[true]}}
</tool_call>)"));
  EXPECT_FALSE(spec_accepts(call, R"(<tool_call>
{"name":"a","arguments":{"x":"12"}}
</tool_call>)"));
  EXPECT_FALSE(spec_accepts(call, R"(<tool_call>
{"name":"c","arguments":{}}
</tool_call>)"));
  EXPECT_FALSE(spec_accepts(call, R"(<tool_call>
{"name":"a","arguments":{"x":1}}
</tool_call)"));
}

TEST(GrammarSpecTest, RefusesWhatItDoesNotKnowByName) {
  auto error_of = [](std::string_view spec) -> std::string {
    try {
      compile_spec(json::parse(spec));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(R"({"regex":"a+"})").find("unknown form 'regex'"), std::string::npos);
  EXPECT_NE(error_of(R"({"literal":""})").find("non-empty string"), std::string::npos);
  EXPECT_NE(error_of(R"({"sequence":[]})").find("non-empty array"), std::string::npos);
  EXPECT_NE(error_of(R"({"literal":"a","choice":[]})").find("one key"), std::string::npos);
  EXPECT_NE(error_of(R"({"json_schema":{"not":{}}})").find("not"), std::string::npos);
  std::string deep = R"({"literal":"x"})";
  for (int i = 0; i < 12; ++i) deep = R"({"sequence":[)" + deep + "]}";
  EXPECT_NE(error_of(deep).find("nested deeper"), std::string::npos);
}

}  // namespace
}  // namespace kvgate::grammar
