// TextStream: a request's tokens as the text its client sees, on the real
// stories260K vocabulary. Never half a UTF-8 character, a stop string cut
// out wherever the tokens split it (and the request cancelled once), text
// held back only while it can still start a stop string, and the finish
// reason a client is told.
#include "engine/text/text_stream.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/utf8.h"
#include "tests/shared_data.h"

namespace kvgate {
namespace {

using kvgate::testing::shared_path;

struct TextStreamVocab {
  std::unique_ptr<GgufFile> file = GgufFile::open(shared_path("models/stories260K.gguf"));
  std::unique_ptr<Tokenizer> tok = Tokenizer::from_gguf(*file);

  // The byte-fallback token for one byte: text spelled a byte per token.
  TokenId byte_token(unsigned char c) const {
    static const char* hex = "0123456789ABCDEF";
    const std::string name = std::string("<0x") + hex[c >> 4] + hex[c & 15] + ">";
    const TokenId id = tok->vocab().find(name);
    EXPECT_GE(id, 0) << name;
    return id;
  }
  Tokens bytes_as_tokens(const std::string& s) const {
    Tokens out;
    for (char c : s) out.push_back(byte_token(static_cast<unsigned char>(c)));
    return out;
  }
  // What each token of `ids` adds to the text (a StreamDecoder's pieces).
  std::vector<std::string> pieces_of(const Tokens& ids) const {
    StreamDecoder d(*tok);
    std::vector<std::string> out;
    for (TokenId id : ids) out.push_back(d.push(id));
    return out;
  }
};

// A TextStream with a counter behind its on_stop (the caller's cancel).
struct CountingTextStream {
  int cancels = 0;
  TextStream stream;
  CountingTextStream(const Tokenizer& tok, std::vector<std::string> stops, bool continuation = false)
      : stream(tok, std::move(stops), continuation, [this] { ++cancels; }) {}
};

const char kStory[] = "Once upon a time, there was a little girl named Lily. She loved to play outside.";

TEST(TextStream, TextSplitAcrossTokensJoinsToTheWholeText) {
  TextStreamVocab v;
  const Tokens ids = v.tok->encode(kStory, {.add_bos = true});
  ASSERT_GT(ids.size(), 10u);
  CountingTextStream s(*v.tok, {});
  std::string all;
  int nonempty = 0;
  for (TokenId id : ids) {
    const std::string part = s.stream.push(id);
    EXPECT_NE(part, kStory);  // never the whole text at once: it arrives in pieces
    nonempty += part.empty() ? 0 : 1;
    all += part;
  }
  EXPECT_GT(nonempty, 10);
  EXPECT_EQ(all, kStory);  // nothing held back without stop strings
  EXPECT_EQ(s.stream.finish(FinishReason::kLength), "");
  EXPECT_FALSE(s.stream.stopped());
  EXPECT_EQ(s.stream.finish_reason(), FinishReason::kLength);
  EXPECT_EQ(s.cancels, 0);
}

TEST(TextStream, ContinuationKeepsTheLeadingSpace) {
  TextStreamVocab v;
  const Tokens ids = v.tok->encode("world", {.add_bos = false});
  for (bool continuation : {false, true}) {
    TextStream s(*v.tok, {}, continuation);
    std::string all;
    for (TokenId id : ids) all += s.push(id);
    all += s.finish(FinishReason::kStop);
    EXPECT_EQ(all, continuation ? " world" : "world") << "continuation " << continuation;
  }
}

TEST(TextStream, MultiByteCharacterSplitAcrossTokensIsNeverEmittedHalf) {
  TextStreamVocab v;
  const std::string rocket = "\xF0\x9F\x9A\x80";  // U+1F680: four byte tokens in this vocabulary
  const Tokens ids = v.tok->encode("go " + rocket + " up", {.add_bos = true});
  CountingTextStream s(*v.tok, {"zzz"});
  std::string all;
  int pushes_with_rocket = 0;
  for (TokenId id : ids) {
    const std::string part = s.stream.push(id);
    EXPECT_TRUE(utf8_is_valid(part)) << "after id " << id;
    if (part.find(rocket) != std::string::npos) ++pushes_with_rocket;
    all += part;
  }
  EXPECT_EQ(pushes_with_rocket, 1);  // the character arrives whole, in one piece
  all += s.stream.finish(FinishReason::kLength);
  EXPECT_EQ(all, "go " + rocket + " up");
  EXPECT_EQ(s.stream.finish_reason(), FinishReason::kLength);
}

TEST(TextStream, StopStringMadeOfAMultiByteCharacterIsCutWhole) {
  TextStreamVocab v;
  const std::string rocket = "\xF0\x9F\x9A\x80";
  const Tokens ids = v.tok->encode("go " + rocket + " up", {.add_bos = true});
  CountingTextStream s(*v.tok, {rocket});
  std::string all;
  for (TokenId id : ids) all += s.stream.push(id);
  all += s.stream.finish(FinishReason::kCancelled);
  EXPECT_EQ(all, "go ");
  EXPECT_EQ(s.cancels, 1);
  EXPECT_EQ(s.stream.finish_reason(), FinishReason::kStop);
}

TEST(TextStream, StopStringSpanningTwoTokensIsCutAndCancelsOnce) {
  TextStreamVocab v;
  const Tokens ids = v.tok->encode(kStory, {.add_bos = true});
  const std::vector<std::string> pieces = v.pieces_of(ids);
  // A stop string made of the end of one token's piece and the start of the
  // next's, past the first few tokens and found nowhere earlier in the text.
  size_t k = 4;
  std::string stop;
  size_t stop_at = 0;
  for (; k + 1 < pieces.size(); ++k) {
    if (pieces[k].size() < 2 || pieces[k + 1].size() < 2) continue;
    stop = pieces[k].substr(pieces[k].size() - 2) + pieces[k + 1].substr(0, 2);
    std::string before;
    for (size_t j = 0; j <= k; ++j) before += pieces[j];
    stop_at = before.size() - 2;
    if (std::string(kStory).find(stop) == stop_at) break;
  }
  ASSERT_LT(k + 1, pieces.size()) << "no stop string spanning two tokens found";
  const std::string want_before = std::string(kStory).substr(0, stop_at);

  CountingTextStream s(*v.tok, {stop});
  std::string all;
  for (size_t j = 0; j < ids.size(); ++j) {
    all += s.stream.push(ids[j]);
    if (j == k) {  // half the stop string arrived: held back, not yet a stop
      EXPECT_FALSE(s.stream.stopped());
      EXPECT_EQ(s.cancels, 0);
      EXPECT_EQ(all.find(stop.substr(0, 2), stop_at), std::string::npos) << all;
    }
    if (j == k + 1) {
      EXPECT_TRUE(s.stream.stopped());
      EXPECT_EQ(s.cancels, 1);
      EXPECT_EQ(all, want_before);
    }
  }
  // Tokens still in flight after the cancel add nothing, and cancel nothing again.
  EXPECT_EQ(all, want_before);
  EXPECT_EQ(s.cancels, 1);
  // The engine reports the cancelled request; the client is told "stop".
  EXPECT_EQ(s.stream.finish(FinishReason::kCancelled), "");
  EXPECT_EQ(s.stream.finish_reason(), FinishReason::kStop);
  EXPECT_EQ(s.cancels, 1);
}

TEST(TextStream, StopStringNotMatchedFinishesWithTheEngineReason) {
  TextStreamVocab v;
  const Tokens ids = v.tok->encode(kStory, {.add_bos = true});
  for (FinishReason engine : {FinishReason::kLength, FinishReason::kStop, FinishReason::kError}) {
    // "Lily!" starts like "Lily." and so is held back until the '.' arrives.
    CountingTextStream s(*v.tok, {"dragon", "Lily!"});
    std::string all;
    for (TokenId id : ids) all += s.stream.push(id);
    all += s.stream.finish(engine);
    EXPECT_EQ(all, kStory);
    EXPECT_FALSE(s.stream.stopped());
    EXPECT_EQ(s.cancels, 0);
    EXPECT_EQ(s.stream.finish_reason(), engine) << finish_reason_name(engine);
  }
}

TEST(TextStream, TextThatCouldStartAStopIsHeldBackThenReleased) {
  TextStreamVocab v;
  CountingTextStream s(*v.tok, {"STOP"});
  const Tokens t = v.bytes_as_tokens("aSTOCKST");
  EXPECT_EQ(s.stream.push(t[0]), "a");
  EXPECT_EQ(s.stream.push(t[1]), "");  // "S": could begin "STOP"
  EXPECT_EQ(s.stream.push(t[2]), "");  // "ST"
  EXPECT_EQ(s.stream.push(t[3]), "");  // "STO"
  EXPECT_EQ(s.stream.push(t[4]), "STOC");  // "STOC" cannot: released at once
  EXPECT_EQ(s.stream.push(t[5]), "K");
  EXPECT_EQ(s.stream.push(t[6]), "");  // "S" again
  EXPECT_EQ(s.stream.push(t[7]), "");  // "ST"
  // The generation ended for another reason: what was held is text after all.
  EXPECT_EQ(s.stream.finish(FinishReason::kLength), "ST");
  EXPECT_FALSE(s.stream.stopped());
  EXPECT_EQ(s.cancels, 0);
  EXPECT_EQ(s.stream.finish_reason(), FinishReason::kLength);
}

TEST(TextStream, StopStringCompletedOneByteAtATimeStopsTheStream) {
  TextStreamVocab v;
  CountingTextStream s(*v.tok, {"STOP"});
  std::string all;
  for (TokenId id : v.bytes_as_tokens("aSTOP and more")) all += s.stream.push(id);
  EXPECT_EQ(all, "a");
  EXPECT_TRUE(s.stream.stopped());
  EXPECT_EQ(s.cancels, 1);
  EXPECT_EQ(s.stream.finish(FinishReason::kLength), "");
  EXPECT_EQ(s.stream.finish_reason(), FinishReason::kStop);
}

// The decoder's held-back bytes are flushed at finish (an unfinished
// character as U+FFFD), and they can still complete a stop string there.
TEST(TextStream, FinishFlushesTheDecoderThroughTheStopStrings) {
  TextStreamVocab v;
  const std::string replacement = "\xEF\xBF\xBD";
  {
    CountingTextStream s(*v.tok, {"x" + replacement});
    const Tokens t = v.bytes_as_tokens("ax\xF0\x9F");  // a four-byte character cut after two
    std::string all;
    for (TokenId id : t) all += s.stream.push(id);
    EXPECT_EQ(all, "a");  // "x" may start the stop; the two bytes are half a character
    EXPECT_EQ(s.stream.finish(FinishReason::kLength), "");
    EXPECT_TRUE(s.stream.stopped());
    EXPECT_EQ(s.stream.finish_reason(), FinishReason::kStop);
  }
  {
    CountingTextStream s(*v.tok, {"STOP"});
    std::string all;
    for (TokenId id : v.bytes_as_tokens("ax\xF0\x9F")) all += s.stream.push(id);
    EXPECT_EQ(all, "ax");
    EXPECT_EQ(s.stream.finish(FinishReason::kLength), replacement);
    EXPECT_FALSE(s.stream.stopped());
    EXPECT_EQ(s.stream.finish_reason(), FinishReason::kLength);
  }
}

}  // namespace
}  // namespace kvgate
