// The token mask's cost over GPT-2's 50,257 tokens: one mask computed for
// a few matcher states (the middle of a string, the start of an object,
// inside a number, ...), median of many, as a markdown table. The mask has
// to be ready by the time a decode step's logits are: a step on a small
// model is a few milliseconds.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/grammar/json_schema.h"
#include "engine/grammar/matcher.h"
#include "engine/grammar/token_mask.h"
#include "tests/bench/median.h"
#include "tests/engine/grammar/gpt2_vocab.h"
#include "tests/shared_data.h"

using namespace kvgate;
using namespace kvgate::grammar;

int main() {
  const testing::ByteVocab vocab =
      testing::load_gpt2_byte_vocab(testing::shared_path("testdata/ggml-vocab-gpt-2.gguf"));
  const auto t0 = std::chrono::steady_clock::now();
  const TokenMasker masker(vocab.tokens, vocab.eos, vocab.special);
  const double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  const char* schema =
      R"({"type":"object","properties":{"name":{"type":"string"},"id":{"type":"integer"},"score":{"type":"number"},)"
      R"("tags":{"type":"array","items":{"type":"string","maxLength":16}},"code":{"type":"string","pattern":"^[A-Z]{2}-\\d{4}$"},)"
      R"("meta":{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"null"}}}},"required":["name","id"]})";
  const auto g = compile_json_schema(std::string_view(schema));
  const auto any = compile_any_json_object();
  struct State {
    const char* name;
    std::shared_ptr<const Grammar> grammar;
    const char* prefix;
  };
  const State states[] = {
      {"start of the output (before `{`)", g, ""},
      {"start of an object (after `{`)", g, "{"},
      {"middle of a string (free text)", g, R"({"name":"The quick brown fox)"},
      {"middle of a pattern string", g, R"({"name":"a","id":1,"code":"AB-1)"},
      {"inside a number", g, R"({"name":"a","id":12,"score":3.14)"},
      {"inside an integer", g, R"({"name":"a","id":12)"},
      {"after a value (`,` or `}`)", g, R"({"name":"a","id":1,"score":1,"tags":[],"code":"AB-1234")"},
      {"json_object: a key", any, R"({"a":1,")"},
      {"json_object: a nested value", any, R"({"a":[1,{"b":)"},
  };
  std::printf("GPT-2 vocabulary: %zu tokens; trie built in %.1f ms\n\n", vocab.tokens.size(), build_ms);
  std::printf("| matcher state | allowed tokens | mask (median of 200) |\n|---|---:|---:|\n");
  for (const State& s : states) {
    Matcher m(s.grammar);
    if (!m.accept(std::string_view(s.prefix))) {
      std::printf("| %s | prefix refused | |\n", s.name);
      continue;
    }
    TokenMask mask;
    masker.fill(m, mask);  // warm
    std::vector<double> us;
    for (int i = 0; i < 200; ++i) {
      const auto a = std::chrono::steady_clock::now();
      masker.fill(m, mask);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
    }
    std::printf("| %s | %zu | %.0f µs |\n", s.name, mask.count(), median(us));
  }
  return 0;
}
