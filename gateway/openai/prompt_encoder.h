// PromptEncoder: a rendered chat prompt to token ids, with the template's
// control tokens as control ids and the messages' text never so.
//
// The result is what llama.cpp gets by tokenizing the whole rendered string
// with parse_special, except inside message text, where "<|im_start|>" stays
// characters: markup segments are cut at the vocabulary's control-token
// texts (longest first); everything between two control tokens, markup and
// content alike, is one raw fragment, encoded in one call without
// parse_special. So tokenization across a markup/content boundary is what
// the whole string would give (SentencePiece's space prefix after a control
// token, byte-level BPE's merges), and nothing a client writes can become a
// control token.
//
// The leading BOS: when the template begins with bos_token, the BOS id (if
// the vocabulary has one); otherwise as the vocabulary's add_bos says.
//
// Immutable after construction; any thread (the Tokenizer is thread-safe).
// It borrows the Tokenizer, which must outlive it.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "cache/ids.h"
#include "engine/tokenizer/tokenizer.h"
#include "gateway/openai/chat_template.h"
#include "gateway/openai/prompt_segment.h"

namespace kvgate::openai {

class PromptEncoder {
 public:
  explicit PromptEncoder(const Tokenizer& tokenizer);

  Tokens encode(const RenderedChat& chat) const;

  // bos_token and eos_token as the vocabulary writes them, for render().
  const TemplateTokens& template_tokens() const { return template_tokens_; }

 private:
  struct ControlToken {
    std::string text;
    TokenId id;
  };

  // Appends markup text to `raw`, cutting it at control tokens: each one
  // flushes `raw` into `out` and is appended as its id.
  void encode_markup(std::string_view text, std::string& raw, Tokens& out) const;
  void flush(std::string& raw, Tokens& out) const;

  const Tokenizer& tokenizer_;
  std::vector<ControlToken> controls_;  // longest text first
  std::array<bool, 256> starts_control_{};  // a control token's first byte
  TemplateTokens template_tokens_;
};

}  // namespace kvgate::openai
