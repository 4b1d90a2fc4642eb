// SentencePiece-style tokenizer: the stories260K golden text, the dummy-prefix
// rules, byte fallback, special tokens, and decode/stream agreement.
#include "engine/tokenizer/spm_tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "base/error.h"
#include "engine/model/gguf_writer.h"
#include "engine/text/stream_decoder.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::read_file;
using kvgate::testing::shared_path;

Tokens read_ids(const std::string& path) {
  std::istringstream in(read_file(path));
  Tokens ids;
  for (TokenId id; in >> id;) ids.push_back(id);
  return ids;
}

struct Loaded {
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Tokenizer> tok;
};

Loaded load(const std::string& rel) {
  Loaded l;
  l.file = GgufFile::open(shared_path(rel));
  l.tok = Tokenizer::from_gguf(*l.file);
  return l;
}

std::string stream_all(const Tokenizer& tok, std::span<const TokenId> ids) {
  StreamDecoder d(tok);
  std::string out;
  for (TokenId id : ids) out += d.push(id);
  return out + d.finish();
}

TEST(TokenizerSpm, Stories260kGoldenDecode) {
  Loaded m = load("models/stories260K.gguf");
  Tokens ids = read_ids(shared_path("models/stories260K.greedy200.ids.txt"));
  ASSERT_EQ(ids.size(), 200u);
  ids.insert(ids.begin(), m.tok->bos());
  const std::string expected = read_file(shared_path("models/stories260K.greedy200.expected.txt"));
  EXPECT_EQ(m.tok->decode(ids), expected);
  EXPECT_EQ(stream_all(*m.tok, ids), expected);
}

TEST(TokenizerSpm, Stories260kVocabularyFacts) {
  Loaded m = load("models/stories260K.gguf");
  const Tokenizer& t = *m.tok;
  EXPECT_EQ(t.n_vocab(), 512);
  EXPECT_EQ(t.bos(), 1);
  EXPECT_EQ(t.eos(), 2);
  EXPECT_TRUE(t.is_eog(2));
  EXPECT_FALSE(t.is_eog(1));
  EXPECT_TRUE(t.is_control(1));
  EXPECT_FALSE(t.is_control(403));
  EXPECT_EQ(t.piece(403), "\xE2\x96\x81Once");
  EXPECT_EQ(t.token_bytes(403), " Once");
  EXPECT_EQ(t.token_bytes(3 + 0x41), "A");  // <0x41>
  EXPECT_EQ(t.token_bytes(1), "");          // control
  EXPECT_THROW(t.token_bytes(512), Error);
  EXPECT_THROW(t.piece(-1), Error);
}

TEST(TokenizerSpm, EncodeAddsBosOnlyWhenAsked) {
  Loaded m = load("models/stories260K.gguf");
  const Tokens with = m.tok->encode("Once upon a time", {.add_bos = true});
  const Tokens without = m.tok->encode("Once upon a time", {.add_bos = false});
  ASSERT_FALSE(with.empty());
  EXPECT_EQ(with.front(), 1);
  EXPECT_EQ(Tokens(with.begin() + 1, with.end()), without);
  EXPECT_EQ((Tokens{403, 407, 261, 378}), without);  // ▁Once ▁upon ▁a ▁time
  EXPECT_EQ(m.tok->encode("", {.add_bos = true}), Tokens{1});
  EXPECT_TRUE(m.tok->encode("", {.add_bos = false}).empty());
}

TEST(TokenizerSpm, RoundTripsTextWithBytesTheVocabularyLacks) {
  Loaded m = load("models/stories260K.gguf");
  for (std::string s : {"Once upon a time", " leading space", "two  spaces", "tab\tand\nnewline",
                        "caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x9A\x80", "   ", "\n", "x"}) {
    const Tokens ids = m.tok->encode(s, {.add_bos = true});
    EXPECT_EQ(m.tok->decode(ids), s) << s;
    EXPECT_EQ(stream_all(*m.tok, ids), s) << s;
  }
}

TEST(TokenizerSpm, ControlTokensOnlyParsedWhenAsked) {
  Loaded m = load("testdata/ggml-vocab-llama-spm.gguf");
  const Tokenizer& t = *m.tok;
  const Tokens plain = t.encode("a</s>b", {.add_bos = false});
  EXPECT_EQ(std::count(plain.begin(), plain.end(), t.eos()), 0);
  EXPECT_EQ(t.decode(plain), "a</s>b");
  const Tokens parsed = t.encode("a</s>b", {.add_bos = false, .parse_special = true});
  // "▁a", "</s>", then "▁b": the dummy prefix is added again after a special token.
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[1], t.eos());
  EXPECT_EQ(t.piece(parsed[2]), "\xE2\x96\x81" "b");
}

TEST(TokenizerSpm, UnsupportedKindsAreRefusedByName) {
  auto f = GgufFile::open(shared_path("testdata/ggml-vocab-bert-bge.gguf"));
  try {
    Tokenizer::from_gguf(*f);
    FAIL() << "bert vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unsupported tokenizer 'bert'"), std::string::npos) << e.what();
  }
}

// A tiny hand-made SPM vocabulary, to pin the merge order independently of
// any real model: scores decide, not lengths.
std::unique_ptr<Tokenizer> tiny_spm(std::vector<std::pair<std::string, float>> pieces,
                                    std::unique_ptr<GgufFile>& keep, std::vector<std::byte>& bytes) {
  GgufArray tokens{GgufType::STRING, {}}, scores{GgufType::FLOAT32, {}}, types{GgufType::INT32, {}};
  auto add = [&](const std::string& s, float score, int type) {
    GgufValue t{GgufType::STRING, uint64_t{0}}, sc{GgufType::FLOAT32, uint64_t{0}}, ty{GgufType::INT32, uint64_t{0}};
    t.v = s;
    sc.v = double{score};
    ty.v = int64_t{type};
    tokens.items.push_back(std::move(t));
    scores.items.push_back(std::move(sc));
    types.items.push_back(std::move(ty));
  };
  add("<unk>", 0, 2);
  add("<s>", 0, 3);
  add("</s>", 0, 3);
  for (auto& [s, score] : pieces) add(s, score, 1);
  GgufWriter w;
  w.set_string("tokenizer.ggml.model", "llama");
  w.set("tokenizer.ggml.tokens", {GgufType::ARRAY, tokens});
  w.set("tokenizer.ggml.scores", {GgufType::ARRAY, scores});
  w.set("tokenizer.ggml.token_type", {GgufType::ARRAY, types});
  bytes = w.serialize();
  keep = GgufFile::parse(bytes);
  return Tokenizer::from_gguf(*keep);
}

TEST(TokenizerSpm, MergesByScoreNotLength) {
  std::unique_ptr<GgufFile> f;
  std::vector<std::byte> bytes;
  // "abc": ab (score -5) vs bc (score -1): bc merges first, then a+bc is not
  // a piece, so the result is a, bc.
  auto t = tiny_spm({{"\xE2\x96\x81", -10}, {"a", -2}, {"b", -2}, {"c", -2}, {"ab", -5}, {"bc", -1}}, f, bytes);
  const Tokens ids = t->encode("abc", {.add_bos = false});
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(t->piece(ids[0]), "\xE2\x96\x81");
  EXPECT_EQ(t->piece(ids[1]), "a");
  EXPECT_EQ(t->piece(ids[2]), "bc");
  // No byte tokens and no piece for 'z': it becomes <unk>.
  const Tokens unk = t->encode("z", {.add_bos = false});
  EXPECT_EQ(unk.back(), 0);
}

}  // namespace
}  // namespace kvgate
