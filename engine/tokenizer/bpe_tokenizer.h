// BpeTokenizer: byte-level BPE (GPT-2 family, tokenizer.ggml.model = "gpt2").
//
// Text -> special tokens cut out -> pre-tokenizer words -> per word: one
// symbol per raw byte (GPT-2's byte-to-character map makes every byte a
// vocabulary character), then repeatedly merge the adjacent pair with the
// LOWEST merge rank (ties: leftmost) until no listed pair is adjacent. The
// loop keeps candidate pairs in a priority queue and skips stale entries, so
// a word of n bytes costs O(n log n), not a rescan per merge. Results per
// word are cached (WordCache).
//
// Decoding maps each token's characters back to bytes; user-defined tokens
// (type 4, e.g. mpt's runs of spaces) are raw UTF-8 text, not byte-mapped.
#pragma once

#include <array>
#include <cstdint>

#include "engine/tokenizer/bpe_merges.h"
#include "engine/tokenizer/word_cache.h"
#include "engine/tokenizer/pre_tokenizer.h"
#include "engine/tokenizer/tokenizer.h"

namespace kvgate {

class BpeTokenizer final : public Tokenizer {
 public:
  // Throws kvgate::Error for missing merges or an unknown tokenizer.ggml.pre.
  BpeTokenizer(Vocab vocab, const GgufFile& f);

  Tokens encode(std::string_view text, EncodeOptions opt) const override;
  std::string token_bytes(TokenId id) const override { return std::string(bytes_of(id)); }

  const PreTokenizer& pre_tokenizer() const { return pre_; }

 private:
  void encode_word(std::string_view word, Tokens& out) const;
  void merge_word(std::string_view word, Tokens& out) const;
  // Emits the symbol covering raw bytes `raw`: its token, or (for a string the
  // vocabulary lacks) the single-character tokens of its text, as llama.cpp does.
  void emit(int32_t symbol, std::string_view raw, Tokens& out) const;

  PreTokenizer pre_;
  BpeMerges merges_;
  std::array<int32_t, 256> byte_symbol_{};  // the starting symbol of each raw byte
  WordCache cache_;
};

}  // namespace kvgate
