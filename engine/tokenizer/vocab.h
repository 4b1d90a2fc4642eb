// Vocab: a GGUF file's `tokenizer.ggml.*` metadata, checked and indexed.
//
// It holds what every tokenizer kind shares: the token strings, their types
// and scores, the special ids and the add-BOS/space-prefix flags (with
// llama.cpp's defaults per kind, overridden by the file's own keys), and an
// exact text -> id index. The merging algorithms live in the tokenizer
// classes; this class never decides how text becomes ids.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/gguf.h"
#include "cache/ids.h"

namespace kvgate {

inline constexpr TokenId kNoToken = -1;

// llama.cpp's token types (tokenizer.ggml.token_type); anything else is Undefined.
enum class TokenType : uint8_t {
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

enum class VocabKind { Spm, Bpe };  // tokenizer.ggml.model "llama" / "gpt2"

class Vocab {
 public:
  // Throws kvgate::Error for a missing or malformed vocabulary, and
  // "unsupported tokenizer '<model>'" for a kind kvgate does not implement.
  static Vocab from_gguf(const GgufFile& f);

  VocabKind kind() const { return kind_; }
  const std::string& model_name() const { return model_; }   // tokenizer.ggml.model
  const std::string& pre() const { return pre_; }            // tokenizer.ggml.pre, "" if absent
  const std::string& source() const { return source_; }      // file name, for messages

  int32_t size() const { return static_cast<int32_t>(text_.size()); }
  bool valid(TokenId id) const { return id >= 0 && id < size(); }
  const std::string& text(TokenId id) const { return text_[static_cast<size_t>(id)]; }
  TokenType type(TokenId id) const { return type_[static_cast<size_t>(id)]; }
  float score(TokenId id) const { return score_.empty() ? 0.0f : score_[static_cast<size_t>(id)]; }

  // Exact string -> id. When two tokens share a string the later id wins, as
  // in llama.cpp's token_to_id map.
  TokenId find(std::string_view text) const {
    auto it = index_.find(text);
    return it == index_.end() ? kNoToken : it->second;
  }

  TokenId bos() const { return bos_; }
  TokenId eos() const { return eos_; }
  TokenId unk() const { return unk_; }
  bool add_bos() const { return add_bos_; }
  bool add_space_prefix() const { return add_space_prefix_; }
  bool is_eog(TokenId id) const;

  // Tokens that are split out of raw text before pre-tokenization: control,
  // unknown and user-defined ones, longest text first (ties by id).
  const std::vector<TokenId>& special_tokens() const { return specials_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  void load_tokens(const GgufFile& f);
  void load_special_ids(const GgufFile& f);
  void mark_end_of_generation();

  VocabKind kind_ = VocabKind::Spm;
  std::string model_, pre_, source_;
  std::vector<std::string> text_;
  std::vector<TokenType> type_;
  std::vector<float> score_;  // empty when the file has no scores (BPE)
  std::unordered_map<std::string, TokenId, Hash, std::equal_to<>> index_;
  TokenId bos_ = kNoToken, eos_ = kNoToken, unk_ = kNoToken, eot_ = kNoToken, eom_ = kNoToken;
  bool add_bos_ = false, add_space_prefix_ = false;
  std::vector<TokenId> eog_;       // sorted
  std::vector<TokenId> specials_;
};

}  // namespace kvgate
