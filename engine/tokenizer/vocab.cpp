#include "engine/tokenizer/vocab.h"

#include <algorithm>
#include <array>
#include <climits>
#include <optional>

#include "base/error.h"

namespace kvgate {
namespace {

constexpr std::string_view kTokens = "tokenizer.ggml.tokens";
constexpr std::string_view kScores = "tokenizer.ggml.scores";
constexpr std::string_view kTypes = "tokenizer.ggml.token_type";

// Tokenizer kinds llama.cpp knows that kvgate does not implement, named so
// the error says what the file actually is.
std::string_view describe_unsupported(std::string_view model) {
  if (model == "bert") return " (WordPiece)";
  if (model == "t5") return " (Unigram)";
  if (model == "rwkv") return " (RWKV greedy)";
  if (model == "none" || model == "no_vocab") return " (no vocabulary)";
  return "";
}

// Pre-tokenizer names whose models expect a BOS unless the file says
// otherwise (llama.cpp sets add_bos for exactly these BPE families).
bool bpe_pre_adds_bos(std::string_view pre) {
  for (std::string_view p : {"llama3", "llama-v3", "llama-bpe", "falcon3", "tekken", "chameleon"})
    if (pre == p) return true;
  return false;
}

// Texts that end a turn in the chat models that use them. Converters do not
// always mark them, so (like llama.cpp) they are found by text and made
// control tokens: then user text can never produce them.
constexpr std::array<std::string_view, 8> kEndOfGenerationTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|eom_id|>", "<EOT>", "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",
};

// A metadata integer as a signed id; negatives and absent keys give nullopt.
std::optional<int64_t> read_id(const GgufFile& f, std::string_view key) {
  const GgufValue* v = f.find(key);
  if (!v) return std::nullopt;
  if (auto* u = std::get_if<uint64_t>(&v->v)) return *u > INT32_MAX ? -1 : static_cast<int64_t>(*u);
  if (auto* i = std::get_if<int64_t>(&v->v)) return *i;
  throw Error(f.source() + ": metadata '" + std::string(key) + "' is " +
              std::string(gguf_type_name(v->type)) + ", expected an integer token id");
}

const GgufArray& array_of(const GgufFile& f, std::string_view key, GgufType elem, size_t n) {
  const GgufArray& a = f.get_array(key);
  if (a.elem_type != elem)
    throw Error(f.source() + ": metadata '" + std::string(key) + "' holds " +
                std::string(gguf_type_name(a.elem_type)) + ", expected " +
                std::string(gguf_type_name(elem)));
  if (n != SIZE_MAX && a.size() != n)
    throw Error(f.source() + ": metadata '" + std::string(key) + "' has " +
                std::to_string(a.size()) + " entries for " + std::to_string(n) + " tokens");
  return a;
}

}  // namespace

Vocab Vocab::from_gguf(const GgufFile& f) {
  Vocab v;
  v.source_ = f.source();
  auto model = f.optional_string("tokenizer.ggml.model");
  if (!model) throw Error(f.source() + ": no tokenizer (metadata 'tokenizer.ggml.model' is missing)");
  v.model_ = *model;
  if (v.model_ == "llama") {
    v.kind_ = VocabKind::Spm;
  } else if (v.model_ == "gpt2") {
    v.kind_ = VocabKind::Bpe;
  } else {
    throw Error("unsupported tokenizer '" + v.model_ + "'" +
                std::string(describe_unsupported(v.model_)) + " in " + f.source() +
                ": kvgate implements 'llama' (SentencePiece) and 'gpt2' (byte-level BPE)");
  }
  v.pre_ = f.optional_string("tokenizer.ggml.pre").value_or("");

  v.load_tokens(f);
  v.load_special_ids(f);

  // llama.cpp's defaults per kind, then the file's own keys.
  const bool spm = v.kind_ == VocabKind::Spm;
  v.add_bos_ = spm || bpe_pre_adds_bos(v.pre_);
  v.add_space_prefix_ = spm;
  if (auto b = f.optional_bool("tokenizer.ggml.add_bos_token")) v.add_bos_ = *b;
  if (auto b = f.optional_bool("tokenizer.ggml.add_space_prefix")) v.add_space_prefix_ = *b;

  v.mark_end_of_generation();

  for (TokenId id = 0; id < v.size(); ++id) {
    const TokenType t = v.type(id);
    if ((t == TokenType::Control || t == TokenType::Unknown || t == TokenType::UserDefined) &&
        !v.text(id).empty())
      v.specials_.push_back(id);
  }
  std::stable_sort(v.specials_.begin(), v.specials_.end(), [&](TokenId a, TokenId b) {
    return v.text(a).size() > v.text(b).size();
  });
  return v;
}

void Vocab::load_tokens(const GgufFile& f) {
  const GgufArray& tokens = array_of(f, kTokens, GgufType::STRING, SIZE_MAX);
  const size_t n = tokens.items.size();
  if (n == 0) throw Error(f.source() + ": metadata 'tokenizer.ggml.tokens' is empty");
  if (n > static_cast<size_t>(INT32_MAX))
    throw Error(f.source() + ": vocabulary of " + std::to_string(n) + " tokens is too large");

  text_.reserve(n);
  index_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    text_.push_back(std::get<std::string>(tokens.items[i].v));
    // An empty string can never be matched, so it is not indexed.
    if (!text_.back().empty()) index_[text_.back()] = static_cast<TokenId>(i);
  }

  type_.assign(n, TokenType::Normal);
  if (f.has(kTypes)) {
    const GgufArray& types = f.get_array(kTypes);
    if (types.size() != n)
      throw Error(f.source() + ": metadata 'tokenizer.ggml.token_type' has " +
                  std::to_string(types.size()) + " entries for " + std::to_string(n) + " tokens");
    for (size_t i = 0; i < n; ++i) {
      int64_t t = 0;
      const GgufValue e = types.at(i);
      if (auto* s = std::get_if<int64_t>(&e.v)) t = *s;
      else if (auto* u = std::get_if<uint64_t>(&e.v)) t = static_cast<int64_t>(*u & 0xFF);
      else throw Error(f.source() + ": metadata 'tokenizer.ggml.token_type' holds non-integers");
      type_[i] = t >= 1 && t <= 6 ? static_cast<TokenType>(t) : TokenType::Undefined;
    }
  }

  if (f.has(kScores)) {
    const GgufArray& scores = array_of(f, kScores, GgufType::FLOAT32, n);
    score_.reserve(n);
    for (size_t i = 0; i < n; ++i) score_.push_back(static_cast<float>(std::get<double>(scores.at(i).v)));
  } else if (kind_ == VocabKind::Spm) {
    throw Error(f.source() + ": SentencePiece vocabulary has no 'tokenizer.ggml.scores'");
  }
}

void Vocab::load_special_ids(const GgufFile& f) {
  // llama.cpp's defaults for ids the file does not name.
  const bool spm = kind_ == VocabKind::Spm;
  int64_t bos = spm ? 1 : 11, eos = spm ? 2 : 11, unk = spm ? 0 : -1, eot = -1, eom = -1;
  auto take = [&](std::string_view key, int64_t& id) {
    // An id outside the vocabulary (0xFFFFFFFF is the usual "none") leaves the default.
    if (auto v = read_id(f, key); v && *v >= 0 && *v < size()) id = *v;
  };
  take("tokenizer.ggml.bos_token_id", bos);
  take("tokenizer.ggml.eos_token_id", eos);
  take("tokenizer.ggml.unknown_token_id", unk);
  take("tokenizer.ggml.eot_token_id", eot);
  take("tokenizer.ggml.eom_token_id", eom);
  auto checked = [&](int64_t id) { return id >= 0 && id < size() ? static_cast<TokenId>(id) : kNoToken; };
  bos_ = checked(bos);
  eos_ = checked(eos);
  unk_ = checked(unk);
  eot_ = checked(eot);
  eom_ = checked(eom);
}

void Vocab::mark_end_of_generation() {
  for (TokenId id : {eos_, eot_, eom_})
    if (id != kNoToken) eog_.push_back(id);
  for (std::string_view t : kEndOfGenerationTexts) {
    const TokenId id = find(t);
    if (id == kNoToken) continue;
    eog_.push_back(id);
    type_[static_cast<size_t>(id)] = TokenType::Control;
  }
  std::sort(eog_.begin(), eog_.end());
  eog_.erase(std::unique(eog_.begin(), eog_.end()), eog_.end());
}

bool Vocab::is_eog(TokenId id) const {
  return std::binary_search(eog_.begin(), eog_.end(), id);
}

}  // namespace kvgate
