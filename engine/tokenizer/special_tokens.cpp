#include "engine/tokenizer/special_tokens.h"

#include <algorithm>

#include "engine/tokenizer/vocab.h"

namespace kvgate {

SpecialTokenSplitter::SpecialTokenSplitter(const Vocab& vocab) {
  root_.fill(-1);
  trie_.emplace_back();
  for (TokenId id : vocab.special_tokens()) {
    const bool always = vocab.type(id) == TokenType::UserDefined;
    any_always_ |= always;
    const auto index = static_cast<int32_t>(candidates_.size());
    candidates_.push_back({id, vocab.text(id), always});

    int32_t node = 0;
    for (char ch : vocab.text(id)) {
      const auto b = static_cast<unsigned char>(ch);
      int32_t next = child(node, b);
      if (next < 0) {
        next = static_cast<int32_t>(trie_.size());
        trie_.emplace_back();
        auto& kids = trie_[static_cast<size_t>(node)].next;
        kids.insert(std::lower_bound(kids.begin(), kids.end(), std::make_pair(b, int32_t{-1})),
                    {b, next});
        if (node == 0) root_[b] = next;
      }
      node = next;
    }
    // Two tokens with the same text: the first in splitting order claims every
    // occurrence, so the later one can never match and needs no trie entry.
    if (trie_[static_cast<size_t>(node)].candidate < 0) trie_[static_cast<size_t>(node)].candidate = index;
  }
}

int32_t SpecialTokenSplitter::child(int32_t node, unsigned char b) const {
  if (node == 0) return root_[b];
  const auto& kids = trie_[static_cast<size_t>(node)].next;
  auto it = std::lower_bound(kids.begin(), kids.end(), std::make_pair(b, int32_t{-1}));
  return it != kids.end() && it->first == b ? it->second : -1;
}

void SpecialTokenSplitter::mark_present(std::string_view text, bool parse_special,
                                        std::vector<char>& present) const {
  for (size_t i = 0; i < text.size(); ++i) {
    int32_t node = root_[static_cast<unsigned char>(text[i])];
    for (size_t j = i + 1; node >= 0; ++j) {
      const int32_t c = trie_[static_cast<size_t>(node)].candidate;
      if (c >= 0 && (parse_special || candidates_[static_cast<size_t>(c)].always)) present[static_cast<size_t>(c)] = 1;
      if (j >= text.size()) break;
      node = child(node, static_cast<unsigned char>(text[j]));
    }
  }
}

void SpecialTokenSplitter::split(std::string_view text, SplitTokens which, std::vector<TextFragment>& out) const {
  out.clear();
  if (text.empty()) return;
  out.push_back({kNoToken, text});
  const bool parse_special = which == SplitTokens::kAll;
  if (candidates_.empty() || which == SplitTokens::kNone || (!parse_special && !any_always_)) return;

  std::vector<char> present(candidates_.size(), 0);
  mark_present(text, parse_special, present);

  std::vector<TextFragment> next;
  for (size_t c = 0; c < candidates_.size(); ++c) {
    if (!present[c]) continue;
    const Candidate& cand = candidates_[c];
    next.clear();
    for (const TextFragment& frag : out) {
      if (frag.token != kNoToken) { next.push_back(frag); continue; }
      std::string_view rest = frag.text;
      for (size_t hit; (hit = rest.find(cand.text)) != std::string_view::npos;) {
        if (hit > 0) next.push_back({kNoToken, rest.substr(0, hit)});
        next.push_back({cand.id, cand.text});
        rest.remove_prefix(hit + cand.text.size());
      }
      if (!rest.empty()) next.push_back({kNoToken, rest});
    }
    out.swap(next);
  }
}

}  // namespace kvgate
