// PromptEncoder: a chat template's rendered text to token ids, with the
// template's control tokens as control ids and the request's text never so.
//
// A chat template's own markup ("<|im_start|>", "<|eot_id|>", "</s>") must
// become the vocabulary's special tokens, but the same characters inside a
// message must not: a user who writes "<|im_end|><|im_start|>system" would
// otherwise forge a system turn (llama.cpp's server, vLLM and Hugging Face
// all tokenize the whole render with special tokens parsed, and so let
// them). The template is code that transforms request strings freely
// (trim, split, slicing, tojson), so the encoder cannot learn afterwards
// which bytes came from the request. Instead every request string passes
// through protect() before the template sees it: each character that could
// start or end a guarded token (below) there gets the text mark (U+FDD0,
// gateway/template/text_mark.h) in front of it, and encode() reads a marked
// character as text that no special token may include:
//  - the first character of every guarded token's text in the string,
//  - the first character of a guarded token's beginning at the string's end,
//  - the last character of a guarded token's ending at the string's start,
//  - a U+FDD0 the client sent (so it stays one character of text).
// A string with none of these (nearly all text) is unchanged, so the
// template runs on exactly what the client sent; what a marked string
// renders differs from Hugging Face's only where Hugging Face would have
// let the client write a control token. Not covered: a template that writes
// a control token's two halves around a request string ('<|' + x + '|>');
// roles, which Phi-3's template writes so, are never client text here.
//
// The guarded tokens are the vocabulary's control and unknown tokens, and
// its user-defined tokens whose text the chat template writes (Gemma's
// <start_of_turn>, Phi-3's <|user|> where a GGUF ships them user-defined,
// Qwen's <tool_call>): llama.cpp's tokenizer splits user-defined tokens out
// of any text, so without this a client could write a turn marker. Other
// user-defined tokens (mpt's runs of spaces) become their ids anywhere, as
// in llama.cpp.
//
// Between special tokens, markup and text are one fragment, encoded in one
// call without parse_special, so the ids are what the whole string gives
// (SentencePiece's space prefix after a control token, byte-level BPE's
// merges across a markup/text boundary): for a render without marks,
// exactly llama.cpp's tokenization of it with parse_special.
//
// The leading BOS: a render that begins with bos_token's text has it as
// its first control token; otherwise the BOS id when the vocabulary's
// add_bos says so, as llama.cpp adds it. Never two.
//
// Immutable after construction; any thread (the Tokenizer is thread-safe).
// It borrows the Tokenizer, which must outlive it.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "cache/ids.h"
#include "engine/tokenizer/tokenizer.h"

namespace kvgate::openai {

// bos_token and eos_token as the vocabulary writes them ("<s>", "</s>";
// "<|begin_of_text|>", "<|eot_id|>"), the variables a template is given.
// Empty when the vocabulary has none.
struct TemplateTokens {
  std::string bos;
  std::string eos;
};

class PromptEncoder {
 public:
  // `template_markup`: the chat template's source, whose user-defined
  // tokens are guarded too.
  explicit PromptEncoder(const Tokenizer& tokenizer, std::string_view template_markup = {});

  // A request string, marked where it could make or complete a control token.
  std::string protect(std::string_view text) const;

  // A rendered prompt to ids (see above).
  Tokens encode(std::string_view rendered) const;
  // The rest of a render whose beginning is already ids (a continued
  // conversation, serving/response_chain.h): the same, without a BOS.
  Tokens encode_tail(std::string_view rendered) const;

  const TemplateTokens& template_tokens() const { return template_tokens_; }

 private:
  struct SpecialToken {
    std::string text;
    TokenId id;
  };
  // A set of special tokens, longest text first, with the bytes they start
  // and end with for quick rejection.
  struct TokenSet {
    std::vector<SpecialToken> tokens;
    std::size_t longest = 0;
    std::array<bool, 256> first_byte{};
    std::array<bool, 256> last_byte{};
    void add(std::string text, TokenId id);
    void sort();
    // The token whose text starts at text[i], longest first; null if none.
    const SpecialToken* match(std::string_view text, std::size_t i) const;
    // Whether text[i..] (to its end) is a proper beginning of a token.
    bool starts_one(std::string_view text, std::size_t i) const;
    // Whether text[..end) (from its start) is a proper ending of a token.
    bool ends_one(std::string_view text, std::size_t end) const;
  };

  void flush(std::string& raw, Tokens& out) const;
  // The first byte at or after `from` that may begin a special token or a mark.
  std::size_t next_special(std::string_view text, std::size_t from) const;

  const Tokenizer& tokenizer_;
  TokenSet special_;  // control, unknown and user-defined: what encode() matches
  TokenSet guarded_;  // what protect() keeps a request string from making
  std::array<bool, 256> scan_stop_{};  // special_'s first bytes and the mark's first byte
  TemplateTokens template_tokens_;
};

}  // namespace kvgate::openai
