// SpmTokenizer: SentencePiece-style BPE over scored pieces (Llama 1/2,
// tokenizer.ggml.model = "llama"), as llama.cpp runs it.
//
// Text: a dummy-prefix space is added at the start of the input and after
// every special token (add_space_prefix), and every ' ' becomes U+2581 '▁'.
// Merging: start from single UTF-8 characters; repeatedly join the adjacent
// pair whose concatenation is the vocabulary piece with the HIGHEST score
// (ties: leftmost), until no adjacent pair forms a piece. Whatever is not a
// piece at the end (a character outside the vocabulary) falls back to its
// bytes as <0xNN> tokens, so no input is ever lost.
//
// Speed: when no mergeable piece has a '▁' after another character (true of
// Llama's vocabularies: '▁' only leads a piece), no merge can cross the
// start of a word, so each word ('▁' run + what follows) is merged on its own
// and cached. The result is identical to merging the whole text at once.
#pragma once

#include <array>

#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/word_cache.h"

namespace kvgate {

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(Vocab vocab);

  Tokens encode(std::string_view text, EncodeOptions opt) const override;
  std::string token_bytes(TokenId id) const override { return std::string(bytes_of(id)); }

 private:
  // Merges `escaped` (spaces already '▁') and appends its ids to `out`.
  void encode_escaped(std::string_view escaped, Tokens& out) const;
  void encode_word(std::string_view word, Tokens& out) const;  // via the cache
  void merge(std::string_view text, Tokens& out) const;        // the merge loop
  void append_bytes(std::string_view s, Tokens& out) const;

  std::array<TokenId, 256> byte_token_{};  // <0xNN>, else the 1-char piece, else unk
  bool split_words_ = false;               // see "Speed" above
  WordCache cache_;
};

}  // namespace kvgate
