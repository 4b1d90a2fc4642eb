#include "engine/tokenizer/tokenizer.h"

#include "engine/tokenizer/bpe_tokenizer.h"
#include "base/error.h"
#include "engine/tokenizer/spm_tokenizer.h"

namespace kvgate {

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const GgufFile& f) {
  Vocab vocab = Vocab::from_gguf(f);
  switch (vocab.kind()) {
    case VocabKind::Spm: return std::make_unique<SpmTokenizer>(std::move(vocab));
    case VocabKind::Bpe: return std::make_unique<BpeTokenizer>(std::move(vocab), f);
  }
  throw Error(f.source() + ": unsupported tokenizer kind");
}

Tokenizer::Tokenizer(Vocab vocab)
    : vocab_(std::move(vocab)),
      splitter_(vocab_),
      strip_first_space_(vocab_.kind() == VocabKind::Spm && vocab_.add_space_prefix()) {}

Tokenizer::~Tokenizer() = default;

std::string_view Tokenizer::bytes_of(TokenId id) const {
  if (!vocab_.valid(id))
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " +
                std::to_string(vocab_.size()) + " tokens");
  return bytes_[static_cast<size_t>(id)];
}

std::string_view Tokenizer::piece(TokenId id) const {
  bytes_of(id);  // validates
  return vocab_.text(id);
}

void Tokenizer::append_piece(std::string& out, TokenId id, bool& at_start) const {
  std::string_view b = bytes_of(id);
  if (b.empty()) return;
  if (at_start) {
    at_start = false;
    // Only a normal piece can carry the dummy prefix the encoder added.
    if (strip_first_space_ && vocab_.type(id) == TokenType::Normal && b.front() == ' ') b.remove_prefix(1);
  }
  out.append(b);
}

std::string Tokenizer::decode(std::span<const TokenId> ids) const {
  std::string out;
  bool at_start = true;
  for (TokenId id : ids) append_piece(out, id, at_start);
  return out;
}

void Tokenizer::begin_encode(std::string_view text, EncodeOptions opt, Tokens& out,
                             std::vector<TextFragment>& fragments) const {
  // Symbol offsets are 32-bit; a prompt this large is a client error anyway.
  if (text.size() > (size_t{1} << 31))
    throw Error("text of " + std::to_string(text.size()) + " bytes is too long to tokenize");
  if (opt.add_bos && vocab_.add_bos() && vocab_.bos() != kNoToken) out.push_back(vocab_.bos());
  splitter_.split(text,
                  opt.parse_special        ? SplitTokens::kAll
                  : opt.split_user_defined ? SplitTokens::kUserDefined
                                           : SplitTokens::kNone,
                  fragments);
}

}  // namespace kvgate
