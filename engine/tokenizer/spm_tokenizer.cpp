#include "engine/tokenizer/spm_tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "engine/tokenizer/utf8.h"

namespace kvgate {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

// A piece of the text being merged; merged-away symbols get len 0.
struct Symbol {
  uint32_t start, len;
  int32_t prev, next;
};

// A candidate merge of symbols[left] with its right neighbour. `size` is the
// joined length when it was queued: if either side changed since, the sizes
// no longer add up and the entry is stale.
struct Bigram {
  float score;
  int32_t left, right;
  uint32_t size;
};

// Highest score first; among equal scores the leftmost pair.
struct LowerPriority {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

// Decoded form of each token: '▁' -> ' ' for normal pieces, the byte for
// <0xNN>, the raw text for user-defined ones, nothing for control/unknown.
std::string spm_bytes(const Vocab& v, TokenId id) {
  const std::string& t = v.text(id);
  switch (v.type(id)) {
    case TokenType::Normal: {
      std::string out;
      for (size_t i = 0; i < t.size();) {
        if (t.compare(i, kSpace.size(), kSpace) == 0) { out += ' '; i += kSpace.size(); }
        else out += t[i++];
      }
      return out;
    }
    case TokenType::Byte: {
      unsigned b = 0;
      if (t.size() == 6 && std::sscanf(t.c_str(), "<0x%2X>", &b) == 1) return std::string(1, static_cast<char>(b));
      return t;  // a byte token not spelled <0xNN>: its text is the best we have
    }
    case TokenType::UserDefined: return t;
    default: return {};
  }
}

// Pieces that text may merge into. Control, unknown and byte pieces are
// excluded, as in SentencePiece: typing "<s>" or "<0x41>" must give those
// characters back on decode, not a BOS or the byte 'A'. (llama.cpp would
// merge into any piece; no vocabulary in the reference vectors can tell.)
bool mergeable(TokenType t) {
  return t == TokenType::Normal || t == TokenType::UserDefined || t == TokenType::Unused;
}

}  // namespace

SpmTokenizer::SpmTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
  std::vector<std::string> bytes;
  bytes.reserve(static_cast<size_t>(vocab_.size()));
  for (TokenId id = 0; id < vocab_.size(); ++id) bytes.push_back(spm_bytes(vocab_, id));
  set_token_bytes(std::move(bytes));

  for (unsigned b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    TokenId id = vocab_.find(hex);
    if (id == kNoToken) id = vocab_.find(std::string(1, static_cast<char>(b)));
    byte_token_[b] = id == kNoToken ? vocab_.unk() : id;
  }

  split_words_ = true;
  for (TokenId id = 0; id < vocab_.size() && split_words_; ++id) {
    if (!mergeable(vocab_.type(id))) continue;
    const std::string& t = vocab_.text(id);
    size_t lead = 0;
    while (t.compare(lead, kSpace.size(), kSpace) == 0) lead += kSpace.size();
    split_words_ = t.find(kSpace, lead) == std::string::npos;
  }
}

Tokens SpmTokenizer::encode(std::string_view text, EncodeOptions opt) const {
  Tokens out;
  std::vector<TextFragment> fragments;
  begin_encode(text, opt, out, fragments);

  std::string escaped;
  bool after_special = true;  // the start of the text counts as "after a special token"
  for (const TextFragment& frag : fragments) {
    if (frag.token != kNoToken) {
      out.push_back(frag.token);
      after_special = true;
      continue;
    }
    escaped.clear();
    if (vocab_.add_space_prefix() && after_special) escaped += kSpace;
    for (char c : frag.text) {
      if (c == ' ') escaped += kSpace;
      else escaped += c;
    }
    encode_escaped(escaped, out);
    after_special = false;
  }
  return out;
}

void SpmTokenizer::append_bytes(std::string_view s, Tokens& out) const {
  for (char c : s) {
    const TokenId id = byte_token_[static_cast<unsigned char>(c)];
    if (id != kNoToken) out.push_back(id);
  }
}

void SpmTokenizer::encode_escaped(std::string_view text, Tokens& out) const {
  if (!split_words_) {
    merge(text, out);
    return;
  }
  // Cut before every '▁' that follows a non-'▁' symbol. Symbols are found
  // exactly as merge() finds them, so the cuts fall on its symbol boundaries.
  size_t word = 0;
  bool prev_space = false;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = std::min(utf8_lead_length(static_cast<unsigned char>(text[pos])), text.size() - pos);
    const bool space = text.compare(pos, len, kSpace) == 0;
    if (space && !prev_space && pos > word) {
      encode_word(text.substr(word, pos - word), out);
      word = pos;
    }
    prev_space = space;
    pos += len;
  }
  encode_word(text.substr(word), out);
}

void SpmTokenizer::encode_word(std::string_view word, Tokens& out) const {
  if (cache_.lookup(word, out)) return;
  const size_t before = out.size();
  merge(word, out);
  cache_.insert(word, out.data() + before, out.size() - before);
}

void SpmTokenizer::merge(std::string_view text, Tokens& out) const {
  if (text.empty()) return;
  // Scratch space reused across calls on this thread: encode runs per request.
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Bigram> heap;
  symbols.clear();
  heap.clear();

  for (size_t pos = 0; pos < text.size();) {
    const size_t len = std::min(utf8_lead_length(static_cast<unsigned char>(text[pos])), text.size() - pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(len), index - 1,
                       pos + len == text.size() ? -1 : index + 1});
    pos += len;
  }

  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const uint32_t size = l.len + symbols[static_cast<size_t>(right)].len;
    const TokenId id = vocab_.find(text.substr(l.start, size));
    if (id == kNoToken || !mergeable(vocab_.type(id))) return;
    heap.push_back({vocab_.score(id), left, right, size});
    std::push_heap(heap.begin(), heap.end(), LowerPriority{});
  };

  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_add(i - 1, i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), LowerPriority{});
    const Bigram bg = heap.back();
    heap.pop_back();
    Symbol& l = symbols[static_cast<size_t>(bg.left)];
    Symbol& r = symbols[static_cast<size_t>(bg.right)];
    if (l.len == 0 || r.len == 0 || l.len + r.len != bg.size) continue;  // stale
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = bg.left;
    try_add(l.prev, bg.left);
    try_add(bg.left, l.next);
  }

  for (int32_t i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(s.start, s.len);
    const TokenId id = vocab_.find(piece);
    // A symbol is only ever merged into a vocabulary piece, so a miss is a
    // single character the vocabulary lacks: spell it in bytes.
    if (id != kNoToken && mergeable(vocab_.type(id))) out.push_back(id);
    else append_bytes(piece, out);
  }
}

}  // namespace kvgate
