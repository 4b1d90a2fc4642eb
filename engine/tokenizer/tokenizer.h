// Tokenizer: text <-> token ids for a GGUF model's own vocabulary.
//
// Two kinds, chosen by `tokenizer.ggml.model`: "llama" (SentencePiece-style,
// SpmTokenizer) and "gpt2" (byte-level BPE, BpeTokenizer). Both reproduce
// llama.cpp's ids exactly (the tests run its reference vectors). Any other
// kind is refused with "unsupported tokenizer '<kind>'".
//
// Encoding first cuts special/added tokens out of the text (control tokens
// only when parse_special is set, so user text cannot inject them), then runs
// the kind's algorithm on each raw-text fragment.
//
// Decoding is byte-exact: decode(encode(x)) == x for valid UTF-8 x (SPM: as
// long as x holds no U+2581, which SentencePiece uses for the space). Control
// tokens decode to nothing. decode() returns raw bytes, which may be invalid
// UTF-8 for arbitrary id sequences; StreamDecoder yields valid UTF-8 only.
//
// All methods are const and thread-safe: the gateway encodes from many threads.
// A Tokenizer copies what it needs: the GgufFile may be closed after from_gguf.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/gguf.h"
#include "engine/tokenizer/special_tokens.h"
#include "cache/ids.h"
#include "engine/tokenizer/vocab.h"

namespace kvgate {

class Tokenizer {
 public:
  struct EncodeOptions {
    bool add_bos = true;         // honoured only if the vocabulary adds a BOS
    bool parse_special = false;  // match control tokens written as text
    // Without parse_special: whether user-defined tokens written as text
    // still become their ids, as llama.cpp's tokenizer makes them. False
    // for a caller that matches them itself (openai::PromptEncoder).
    bool split_user_defined = true;
  };

  // Throws kvgate::Error("unsupported tokenizer 'bert' ...") for unknown
  // kinds, and errors naming the problem for malformed vocabularies.
  static std::unique_ptr<Tokenizer> from_gguf(const GgufFile& f);

  virtual ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  virtual Tokens encode(std::string_view text, EncodeOptions opt) const = 0;
  // The raw bytes the token stands for; empty for control and unknown tokens.
  // Throws kvgate::Error for an id outside the vocabulary.
  virtual std::string token_bytes(TokenId id) const = 0;

  // Whole-sequence decode. SPM: drops the dummy-prefix space of the first
  // piece that produces text, like SentencePiece. Throws for invalid ids.
  std::string decode(std::span<const TokenId> ids) const;

  // The one step decode() and StreamDecoder share: appends the bytes of `id`
  // to `out`; `at_start` is true until the first piece that produces text.
  void append_piece(std::string& out, TokenId id, bool& at_start) const;

  TokenId bos() const { return vocab_.bos(); }  // kNoToken (-1) if none
  TokenId eos() const { return vocab_.eos(); }
  int32_t n_vocab() const { return vocab_.size(); }
  bool is_eog(TokenId id) const { return vocab_.is_eog(id); }
  bool is_control(TokenId id) const { return vocab_.valid(id) && vocab_.type(id) == TokenType::Control; }
  std::string_view piece(TokenId id) const;  // the vocabulary string; throws for invalid ids
  const Vocab& vocab() const { return vocab_; }

 protected:
  explicit Tokenizer(Vocab vocab);

  // Subclass constructors fill this: bytes_[id] is what the token decodes to.
  void set_token_bytes(std::vector<std::string> bytes) { bytes_ = std::move(bytes); }
  std::string_view bytes_of(TokenId id) const;
  // Leading BOS (if asked for and the vocabulary adds one), then the special
  // tokens cut out of `text`.
  void begin_encode(std::string_view text, EncodeOptions opt, Tokens& out,
                    std::vector<TextFragment>& fragments) const;

  const Vocab vocab_;

 private:
  const SpecialTokenSplitter splitter_;  // points into vocab_, so declared after it
  std::vector<std::string> bytes_;
  bool strip_first_space_;
};

}  // namespace kvgate
