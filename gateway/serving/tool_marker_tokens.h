// The control tokens a model writes its tool calls with ([TOOL_CALLS],
// <｜tool▁call▁begin｜>, <|python_tag|>: openai::tool_call_markers), shown
// as their text to a request that offered tools, so its tool-call parser
// can read them. A control token decodes to nothing, so without this the
// parser would see "get_weather[ARGS]..." without its markers, or nothing
// of DeepSeek's, and read no call; llama.cpp's server keeps such a
// format's "preserved tokens" in its text the same way.
//
// The engine's text path (TextStream: UTF-8, stop strings) decodes ids, so
// a marker is replaced by ids of ordinary tokens that spell its text, and
// the marker's text passes every step in order with the rest. Requests
// without tools never see markers; the parser drops them from content, so
// no client does.
//
// Immutable after construction; any thread.
#pragma once

#include <span>
#include <string_view>
#include <unordered_map>

#include "cache/ids.h"
#include "engine/tokenizer/tokenizer.h"

namespace kvgate::serving {

class ToolMarkerTokens {
 public:
  // The markers that are control tokens of `tokenizer`'s vocabulary (a
  // marker that is an ordinary or user-defined token decodes as its text
  // already; one the vocabulary lacks is never generated).
  ToolMarkerTokens(const Tokenizer& tokenizer, std::span<const std::string_view> markers);

  // The ids to decode in place of `id` when it is a marker; else none.
  const Tokens* text_of(TokenId id) const;
  bool empty() const { return text_.empty(); }

 private:
  std::unordered_map<TokenId, Tokens> text_;
};

}  // namespace kvgate::serving
