// Byte-level BPE: special and added tokens, BOS rules, pre-tokenizer
// selection and splitting, long inputs, and concurrent use.
#include "engine/tokenizer/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>

#include "base/error.h"
#include "engine/model/gguf_writer.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

struct Loaded {
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Tokenizer> tok;
};

Loaded load(const std::string& name) {
  Loaded l;
  l.file = GgufFile::open(shared_path("testdata/ggml-vocab-" + name + ".gguf"));
  l.tok = Tokenizer::from_gguf(*l.file);
  return l;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The vocabulary of `name` with some metadata replaced, rebuilt in memory.
std::string load_error_with(const std::string& name, const std::string& key, std::optional<std::string> value) {
  auto f = GgufFile::open(shared_path("testdata/ggml-vocab-" + name + ".gguf"));
  GgufWriter w;
  for (const auto& [k, v] : f->metadata())
    if (k != key) w.set(k, v);
  if (value) w.set_string(key, *value);
  const std::vector<std::byte> bytes = w.serialize();
  auto g = GgufFile::parse(bytes);
  return error_of([&] { Tokenizer::from_gguf(*g); });
}

std::vector<std::string> split(const PreTokenizer& p, std::string_view text) {
  std::vector<std::string_view> words;
  p.split(text, words);
  return {words.begin(), words.end()};
}

TEST(TokenizerBpe, ControlTokensInUserTextAreJustText) {
  Loaded m = load("gpt-2");
  const Tokenizer& t = *m.tok;
  const std::string text = "a<|endoftext|>b";
  const Tokens plain = t.encode(text, {.add_bos = false});
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 50256), 0);
  EXPECT_EQ(t.decode(plain), text);
  const Tokens parsed = t.encode(text, {.add_bos = false, .parse_special = true});
  EXPECT_EQ(std::count(parsed.begin(), parsed.end(), 50256), 1);
  EXPECT_EQ(t.decode(parsed), "ab");  // control tokens decode to nothing
  EXPECT_TRUE(t.is_eog(50256));
  EXPECT_TRUE(t.is_control(50256));
}

TEST(TokenizerBpe, BosFollowsTheVocabulary) {
  Loaded gpt2 = load("gpt-2");  // no add_bos_token key: BPE default is no BOS
  EXPECT_EQ(gpt2.tok->encode("Hello world", {.add_bos = true}), (Tokens{15496, 995}));
  Loaded ds = load("deepseek-llm");  // add_bos_token = true
  const Tokens with = ds.tok->encode("Hello", {.add_bos = true});
  ASSERT_FALSE(with.empty());
  EXPECT_EQ(with.front(), 100000);
  EXPECT_EQ(ds.tok->eos(), 100001);
  EXPECT_EQ(ds.tok->encode("Hello", {.add_bos = false}), Tokens(with.begin() + 1, with.end()));
}

TEST(TokenizerBpe, UserDefinedTokensAreRawText) {
  Loaded m = load("mpt");
  const Tokenizer& t = *m.tok;
  const TokenId four_spaces = t.vocab().find("    ");
  ASSERT_NE(four_spaces, kNoToken);
  EXPECT_EQ(t.vocab().type(four_spaces), TokenType::UserDefined);
  const std::string text = "x    y";
  const Tokens ids = t.encode(text, {.add_bos = false});
  EXPECT_NE(std::find(ids.begin(), ids.end(), four_spaces), ids.end());
  EXPECT_EQ(t.token_bytes(four_spaces), "    ");
  EXPECT_EQ(t.decode(ids), text);
  // Unless the caller matches them itself: then the run is BPE's to merge.
  const Tokens unsplit = t.encode(text, {.add_bos = false, .split_user_defined = false});
  EXPECT_EQ(std::find(unsplit.begin(), unsplit.end(), four_spaces), unsplit.end());
  EXPECT_EQ(t.decode(unsplit), text);
}

TEST(TokenizerBpe, TokenBytesUndoTheByteMap) {
  Loaded m = load("gpt-2");
  const TokenId id = m.tok->vocab().find("\xC4\xA0the");  // "Ġthe"
  ASSERT_NE(id, kNoToken);
  EXPECT_EQ(m.tok->token_bytes(id), " the");
  EXPECT_EQ(m.tok->piece(id), "\xC4\xA0the");
}

TEST(TokenizerBpe, UnknownPreTokenizerIsAnErrorNamingIt) {
  const std::string e = load_error_with("gpt-2", "tokenizer.ggml.pre", "made-up-pre");
  EXPECT_NE(e.find("unknown pre-tokenizer 'made-up-pre'"), std::string::npos) << e;
  EXPECT_NE(load_error_with("gpt-2", "tokenizer.ggml.merges", std::nullopt).find("merges"), std::string::npos);
  EXPECT_NE(load_error_with("gpt-2", "tokenizer.ggml.model", "t5").find("unsupported tokenizer 't5'"),
            std::string::npos);
}

TEST(TokenizerBpe, KnownPreTokenizersCompile) {
  for (std::string_view name : PreTokenizer::known_names()) {
    EXPECT_NO_THROW(PreTokenizer p(name)) << name;
  }
  for (std::string_view required : {"gpt-2", "deepseek-llm", "deepseek-coder", "falcon", "mpt", "starcoder",
                                    "refact", "llama-bpe", "qwen2"}) {
    const auto names = PreTokenizer::known_names();
    EXPECT_NE(std::find(names.begin(), names.end(), required), names.end()) << required;
  }
}

TEST(TokenizerBpe, Llama3AndQwen2Splitting) {
  const PreTokenizer llama3("llama-bpe"), qwen2("qwen2"), gpt2("gpt-2");
  EXPECT_TRUE(llama3.ignore_merges());
  EXPECT_FALSE(qwen2.ignore_merges());
  EXPECT_EQ(split(llama3, "Hello, y'all! 123456"),
            (std::vector<std::string>{"Hello", ",", " y", "'all", "!", " ", "123", "456"}));
  EXPECT_EQ(split(llama3, "I'M ok\n\n  x"), (std::vector<std::string>{"I", "'M", " ok", "\n\n", " ", " x"}));
  EXPECT_EQ(split(qwen2, "v1.25"), (std::vector<std::string>{"v", "1", ".", "2", "5"}));
  EXPECT_EQ(split(gpt2, "Hello  world's"), (std::vector<std::string>{"Hello", " ", " world", "'s"}));
}

TEST(TokenizerBpe, PreTokenizerCoversInvalidUtf8) {
  for (std::string_view name : PreTokenizer::known_names()) {
    const PreTokenizer p(name);
    const std::string text = "ab\xFF\xFE c\xE2\x82 \xF0\x9F\x9A\x80 12\xC0";
    std::string joined;
    for (const std::string& w : split(p, text)) {
      EXPECT_FALSE(w.empty()) << name;
      joined += w;
    }
    EXPECT_EQ(joined, text) << name;
  }
}

TEST(TokenizerBpe, AsciiFastPathAgreesWithPcre2) {
  // Pieces chosen to hit every branch: contractions and near-misses, runs of
  // each class, whitespace before non-space, and non-ASCII letters, digits,
  // spaces and invalid bytes that force the PCRE2 fallback mid-word.
  const std::vector<std::string> alphabet = {
      "a", "Z", "7", " ", "  ", "\t", "\n", "\r\n", "\v", "\f", "'", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d",
      "'r", "'v", "'l", "!", "?!", "_", "\x1c", "\x7f", "\x00", "\xC3\xA9", "\xD9\xA3", "\xE3\x80\x80",
      "\xC2\xA0", "\xE2\x80\x83", "\xF0\x9F\x98\x81", "\xFF", "\xC3", "\xE2\x82"};
  std::mt19937 rng(12345);
  for (std::string_view name : {"gpt-2", "starcoder", "falcon", "default"}) {
    const PreTokenizer fast(name), slow(name, /*fast_paths=*/false);
    for (int trial = 0; trial < 3000; ++trial) {
      std::string text;
      for (size_t n = rng() % 24; n > 0; --n) text += alphabet[rng() % alphabet.size()];
      ASSERT_EQ(split(fast, text), split(slow, text)) << name << ": '" << text << "'";
    }
  }
}

TEST(TokenizerBpe, LongRunsOfOneClassDoNotFail) {
  for (std::string name : {"gpt-2", "deepseek-llm", "falcon", "starcoder"}) {
    Loaded m = load(name);
    for (char c : {' ', 'a', '7', '!', '\n'}) {
      const std::string text = "x" + std::string(200000, c) + "y";
      Tokens ids;
      ASSERT_NO_THROW(ids = m.tok->encode(text, {.add_bos = false})) << name << " '" << c << "'";
      EXPECT_EQ(m.tok->decode(ids), text) << name << " '" << c << "'";
    }
  }
}

TEST(TokenizerBpe, OutlivesItsFile) {
  Loaded m = load("starcoder");
  const Tokens before = m.tok->encode("def f(x): return x**2  # 12345", {.add_bos = false});
  m.file.reset();
  EXPECT_EQ(m.tok->encode("def f(x): return x**2  # 12345", {.add_bos = false}), before);
  EXPECT_EQ(m.tok->decode(before), "def f(x): return x**2  # 12345");
}

TEST(TokenizerBpe, ConcurrentEncodesAgree) {
  Loaded m = load("gpt-2");
  const std::vector<std::string> texts = {
      "The quick brown fox jumps over the lazy dog. ", "int main() { return 0; }\n",
      "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C", "emoji \xF0\x9F\x98\x81 and more words words words"};
  std::vector<Tokens> expected;
  for (const auto& s : texts) expected.push_back(m.tok->encode(s, {.add_bos = false}));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const size_t k = static_cast<size_t>(i + t) % texts.size();
        if (m.tok->encode(texts[k], {.add_bos = false}) != expected[k]) ++mismatches[static_cast<size_t>(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int n : mismatches) EXPECT_EQ(n, 0);
}

}  // namespace
}  // namespace kvgate
