#include "engine/tokenizer/bpe_tokenizer.h"

#include <algorithm>

#include "engine/tokenizer/gpt2_byte_map.h"
#include "engine/tokenizer/utf8.h"

namespace kvgate {
namespace {

// Decoded form of each token: byte-mapped characters back to bytes for
// normal tokens; raw text for user-defined ones; nothing for control/unknown.
std::string bpe_bytes(const Vocab& v, TokenId id) {
  const std::string& t = v.text(id);
  switch (v.type(id)) {
    case TokenType::Normal:
    case TokenType::Byte: {
      std::string out;
      for (size_t i = 0; i < t.size();) {
        char32_t cp = 0;
        const size_t n = utf8_decode(t, i, &cp);
        if (n == 0) {  // not UTF-8: keep the byte rather than lose it
          out += t[i++];
          continue;
        }
        // A character outside the byte map has no byte meaning: keep its text.
        if (auto b = gpt2_char_to_byte(cp)) out += static_cast<char>(*b);
        else out.append(t, i, n);
        i += n;
      }
      return out;
    }
    case TokenType::UserDefined: return t;
    default: return {};
  }
}

// A merge candidate between symbols[left] and its right neighbour; it is
// stale once either side's symbol changed (merged into something else).
struct Bigram {
  int32_t rank;
  int32_t left, right;
  int32_t left_sym, right_sym, result;
};

struct LowerPriority {  // lowest rank first; among equal ranks the leftmost
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

struct Symbol {
  int32_t sym;         // BpeMerges symbol id, or kNoSymbol
  uint32_t start, len;  // raw bytes of the word it covers; len 0 once merged away
  int32_t prev, next;
};

}  // namespace

BpeTokenizer::BpeTokenizer(Vocab vocab, const GgufFile& f)
    : Tokenizer(std::move(vocab)), pre_(vocab_.pre()), merges_(f, vocab_) {
  std::vector<std::string> bytes;
  bytes.reserve(static_cast<size_t>(vocab_.size()));
  for (TokenId id = 0; id < vocab_.size(); ++id) bytes.push_back(bpe_bytes(vocab_, id));
  set_token_bytes(std::move(bytes));
  for (unsigned b = 0; b < 256; ++b) byte_symbol_[b] = merges_.symbol(gpt2_byte_to_text(static_cast<uint8_t>(b)));
}

Tokens BpeTokenizer::encode(std::string_view text, EncodeOptions opt) const {
  Tokens out;
  std::vector<TextFragment> fragments;
  begin_encode(text, opt, out, fragments);
  out.reserve(out.size() + text.size() / 3);

  std::vector<std::string_view> words;
  for (const TextFragment& frag : fragments) {
    if (frag.token != kNoToken) {
      out.push_back(frag.token);
      continue;
    }
    words.clear();
    pre_.split(frag.text, words);
    for (std::string_view w : words) encode_word(w, out);
  }
  return out;
}

void BpeTokenizer::emit(int32_t symbol, std::string_view raw, Tokens& out) const {
  if (symbol >= 0 && symbol < vocab_.size()) {
    out.push_back(symbol);
    return;
  }
  for (char b : raw)
    for (char c : gpt2_byte_to_text(static_cast<uint8_t>(b)))
      if (TokenId id = vocab_.find(std::string_view(&c, 1)); id != kNoToken) out.push_back(id);
}

void BpeTokenizer::encode_word(std::string_view word, Tokens& out) const {
  if (word.size() == 1) {  // nothing to merge, and too cheap to cache
    emit(byte_symbol_[static_cast<unsigned char>(word[0])], word, out);
    return;
  }
  if (cache_.lookup(word, out)) return;
  const size_t before = out.size();
  merge_word(word, out);
  cache_.insert(word, out.data() + before, out.size() - before);
}

void BpeTokenizer::merge_word(std::string_view word, Tokens& out) const {
  if (pre_.ignore_merges()) {
    std::string mapped;
    for (char b : word) mapped += gpt2_byte_to_text(static_cast<uint8_t>(b));
    if (TokenId id = vocab_.find(mapped); id != kNoToken) {
      out.push_back(id);
      return;
    }
  }

  // Scratch space reused across calls on this thread.
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Bigram> heap;
  symbols.clear();
  heap.clear();
  const auto n = static_cast<int32_t>(word.size());
  for (int32_t i = 0; i < n; ++i)
    symbols.push_back({byte_symbol_[static_cast<unsigned char>(word[static_cast<size_t>(i)])],
                       static_cast<uint32_t>(i), 1, i - 1, i + 1 < n ? i + 1 : -1});

  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const int32_t ls = symbols[static_cast<size_t>(left)].sym, rs = symbols[static_cast<size_t>(right)].sym;
    const BpeMerges::Merge* m = merges_.find(ls, rs);
    if (!m) return;
    heap.push_back({m->rank, left, right, ls, rs, m->result});
    std::push_heap(heap.begin(), heap.end(), LowerPriority{});
  };
  for (int32_t i = 1; i < n; ++i) try_add(i - 1, i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), LowerPriority{});
    const Bigram bg = heap.back();
    heap.pop_back();
    Symbol& l = symbols[static_cast<size_t>(bg.left)];
    Symbol& r = symbols[static_cast<size_t>(bg.right)];
    if (l.len == 0 || r.len == 0 || l.sym != bg.left_sym || r.sym != bg.right_sym) continue;
    l.sym = bg.result;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = bg.left;
    try_add(l.prev, bg.left);
    try_add(bg.left, l.next);
  }

  for (int32_t i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    emit(s.sym, word.substr(s.start, s.len), out);
  }
}

}  // namespace kvgate
