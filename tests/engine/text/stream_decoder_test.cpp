// StreamDecoder and the UTF-8 rules under it: never half a character, ill-
// formed bytes become U+FFFD exactly as whole-text sanitizing would.
#include "engine/text/stream_decoder.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

TEST(TokenizerUtf8, SanitizeReplacesMaximalSubparts) {
  EXPECT_EQ(utf8_sanitize("abc"), "abc");
  EXPECT_EQ(utf8_sanitize("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(utf8_sanitize("\xFF"), "\xEF\xBF\xBD");
  EXPECT_EQ(utf8_sanitize("a\xE2\x82"), "a\xEF\xBF\xBD");               // truncated: one U+FFFD
  EXPECT_EQ(utf8_sanitize("\xE0\x80\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(utf8_sanitize("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(utf8_sanitize("\xF4\x90\x80\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(utf8_sanitize("\xF0\x9F\x98x"), "\xEF\xBF\xBDx");
  EXPECT_TRUE(utf8_is_valid("\xF0\x9F\x98\x81"));
  EXPECT_FALSE(utf8_is_valid("\xC0\xAF"));
}

TEST(TokenizerUtf8, AppendValidHoldsBackOnlyAnIncompleteTail) {
  std::string out;
  EXPECT_EQ(utf8_append_valid(out, "ab\xF0\x9F", false), 2u);
  EXPECT_EQ(out, "ab");
  out.clear();
  EXPECT_EQ(utf8_append_valid(out, "ab\xF0\x28", false), 4u);  // already invalid: not held
  EXPECT_EQ(out, "ab\xEF\xBF\xBD(");
}

struct Stories {
  std::unique_ptr<GgufFile> file = GgufFile::open(shared_path("models/stories260K.gguf"));
  std::unique_ptr<Tokenizer> tok = Tokenizer::from_gguf(*file);
};

TEST(TokenizerStream, NeverEmitsHalfACharacter) {
  Stories s;
  // U+1F680 is not in the 512-token vocabulary: it is spelled as 4 byte tokens.
  const Tokens ids = s.tok->encode("go \xF0\x9F\x9A\x80!", {.add_bos = true});
  StreamDecoder d(*s.tok);
  std::string all;
  for (TokenId id : ids) {
    const std::string part = d.push(id);
    EXPECT_TRUE(utf8_is_valid(part)) << "after id " << id;
    all += part;
  }
  all += d.finish();
  EXPECT_EQ(all, "go \xF0\x9F\x9A\x80!");
}

TEST(TokenizerStream, FinishFlushesAnUnfinishedCharacterAsReplacement) {
  Stories s;
  StreamDecoder d(*s.tok);
  const TokenId f0 = s.tok->vocab().find("<0xF0>"), x9f = s.tok->vocab().find("<0x9F>");
  EXPECT_EQ(d.push(f0), "");
  EXPECT_EQ(d.push(x9f), "");
  EXPECT_EQ(d.finish(), "\xEF\xBF\xBD");
}

TEST(TokenizerStream, MatchesSanitizedDecodeForRandomIds) {
  Stories s;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Tokens ids(rng() % 40);
    for (TokenId& id : ids) id = static_cast<TokenId>(rng() % static_cast<unsigned>(s.tok->n_vocab()));
    StreamDecoder d(*s.tok);
    std::string streamed;
    for (TokenId id : ids) streamed += d.push(id);
    streamed += d.finish();
    EXPECT_EQ(streamed, utf8_sanitize(s.tok->decode(ids)));
  }
}

TEST(TokenizerStream, DropsOnlyTheFirstDummyPrefixSpace) {
  Stories s;
  const TokenId once = s.tok->vocab().find("\xE2\x96\x81Once");
  const Tokens ids = {s.tok->bos(), once, once};
  EXPECT_EQ(s.tok->decode(ids), "Once Once");
  StreamDecoder d(*s.tok);
  EXPECT_EQ(d.push(ids[0]), "");
  EXPECT_EQ(d.push(ids[1]), "Once");
  EXPECT_EQ(d.push(ids[2]), " Once");
  EXPECT_THROW(d.push(9999), Error);
}

}  // namespace
}  // namespace kvgate
