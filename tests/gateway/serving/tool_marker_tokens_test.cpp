// Tool-call markers that are control tokens reach a tool request's text as
// their text, through the same TextStream as every other token, in a
// byte-level BPE vocabulary and in a SentencePiece one (whose encoder adds
// a dummy-prefix space the marker must not get).
#include "gateway/serving/tool_marker_tokens.h"

#include <gtest/gtest.h>

#include "engine/text/text_stream.h"
#include "gateway/openai/tool_call_parser.h"
#include "tests/gateway/serving/marker_vocabulary.h"
#include "tests/temp_dir.h"

namespace kvgate::serving {
namespace {

using Vocabulary = kvgate::testing::MarkerVocabulary;
using kvgate::testing::marker_vocabulary;

// The text a client's request streams for `ids`, markers shown as tool requests see them.
std::string streamed(const Tokenizer& tok, const ToolMarkerTokens& markers, const Tokens& ids) {
  TextStream text(tok, {}, false);
  std::string out;
  for (TokenId id : ids) {
    if (const Tokens* shown = markers.text_of(id)) {
      for (TokenId s : *shown) out += text.push(s);
    } else {
      out += text.push(id);
    }
  }
  return out + text.finish(FinishReason::kStop);
}

TEST(ToolMarkerTokens, ControlMarkersReadAsTheirText) {
  for (const char* from : {"ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf"}) {
    SCOPED_TRACE(from);
    kvgate::testing::TempDir dir;
    const Vocabulary v = marker_vocabulary(from, {"[TOOL_CALLS]", "[ARGS]", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"}, dir);
    const std::unique_ptr<Tokenizer>& tok = v.tokenizer;
    const TokenId calls = tok->vocab().find("[TOOL_CALLS]"), args = tok->vocab().find("[ARGS]");
    ASSERT_TRUE(tok->is_control(calls));
    const ToolMarkerTokens mistral(*tok, openai::tool_call_markers(openai::ToolCallFormat::kMistral));
    Tokens reply = tok->encode("Sure.", {.add_bos = false});
    reply.push_back(calls);
    reply.push_back(args);
    EXPECT_EQ(streamed(*tok, mistral, reply), "Sure.[TOOL_CALLS][ARGS]");
    // Without the markers (a request without tools) the control tokens are nothing.
    EXPECT_EQ(tok->decode(std::vector<TokenId>{calls, args}), "");
    // Only the format's own markers, and only control tokens.
    EXPECT_EQ(mistral.text_of(tok->vocab().find("<｜tool▁sep｜>")), nullptr);
    EXPECT_EQ(mistral.text_of(reply.front()), nullptr);
    // SentencePiece cannot spell U+2581 ('▁' is its space), which DeepSeek's
    // markers hold; DeepSeek's vocabularies are byte-level BPE.
    if (std::string_view(from).find("spm") != std::string_view::npos) continue;
    const ToolMarkerTokens deepseek(*tok, openai::tool_call_markers(openai::ToolCallFormat::kDeepSeek));
    const TokenId sep = tok->vocab().find("<｜tool▁sep｜>");
    ASSERT_NE(deepseek.text_of(sep), nullptr);
    EXPECT_EQ(streamed(*tok, deepseek, {sep}), "<｜tool▁sep｜>");
    EXPECT_TRUE(ToolMarkerTokens(*tok, openai::tool_call_markers(openai::ToolCallFormat::kHermes)).empty());
  }
}

}  // namespace
}  // namespace kvgate::serving
