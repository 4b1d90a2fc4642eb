#include "engine/grammar/token_mask.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <span>

namespace kvgate::grammar {

size_t TokenMask::count() const {
  size_t c = 0;
  for (uint64_t w : words_) c += static_cast<size_t>(std::popcount(w));
  return c;
}

TokenMasker::TokenMasker(const std::vector<std::string>& tokens, TokenId eos, const std::vector<TokenId>& special,
                         size_t cache_bytes)
    : tokens_(tokens), banned_(tokens.size()), eos_(eos), cache_entries_(cache_bytes / entry_bytes()) {
  for (TokenId id : special)
    if (id >= 0 && static_cast<size_t>(id) < tokens_.size()) banned_[static_cast<size_t>(id)] = true;
  if (eos >= 0 && static_cast<size_t>(eos) < tokens_.size()) banned_[static_cast<size_t>(eos)] = true;
  std::vector<TokenId> ids;
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (!banned_[i] && !tokens_[i].empty()) ids.push_back(static_cast<TokenId>(i));
    else banned_[i] = true;
  std::sort(ids.begin(), ids.end(), [&](TokenId a, TokenId b) {
    return std::lexicographical_compare(
        tokens_[size_t(a)].begin(), tokens_[size_t(a)].end(), tokens_[size_t(b)].begin(), tokens_[size_t(b)].end(),
        [](char x, char y) { return static_cast<uint8_t>(x) < static_cast<uint8_t>(y); });
  });
  // Sorted strings visit the trie in preorder: each string shares its
  // longest common prefix with the one before it.
  std::vector<uint32_t> path;
  const std::string* prev = nullptr;
  auto close_to = [&](size_t depth) {
    while (path.size() > depth) {
      trie_[path.back()].skip = static_cast<uint32_t>(trie_.size());
      path.pop_back();
    }
  };
  for (TokenId id : ids) {
    const std::string& s = tokens_[size_t(id)];
    size_t lcp = 0;
    if (prev)
      while (lcp < prev->size() && lcp < s.size() && (*prev)[lcp] == s[lcp]) ++lcp;
    close_to(lcp);
    for (size_t k = lcp; k < s.size(); ++k) {
      path.push_back(static_cast<uint32_t>(trie_.size()));
      trie_.push_back({static_cast<uint8_t>(s[k]), static_cast<uint16_t>(k + 1), 0, 0, 0});
    }
    TrieNode& node = trie_[path.back()];
    if (node.n_tokens == 0) node.first_token = static_cast<uint32_t>(token_ids_.size());
    token_ids_.push_back(id);
    ++node.n_tokens;
    max_depth_ = std::max(max_depth_, s.size());
    prev = &s;
  }
  close_to(0);
}

namespace {

// The state after a trie node's bytes: either one thread whose top is a
// leaf still reading (fast: only the leaf's frame changes), or a set.
struct Level {
  bool fast = false;
  std::span<const Frame> below;  // fast: the frames under the leaf
  Frame top{};                   // fast: the leaf
  ThreadSet set;
  const ThreadSet* threads = nullptr;
};

void classify(const Grammar& g, Level& l) {
  l.fast = false;
  if (l.threads->size() != 1) return;
  const auto t = l.threads->thread(0);
  if (t.empty()) return;
  const Frame& top = t.back();
  const Node& n = g.nodes[top.node];
  // A leaf that may stop here could hand the byte to its parent: general.
  if (n.kind != NodeKind::kDfa || g.dfas[n.dfa].can_stop(top.a, static_cast<uint32_t>(top.b))) return;
  l.fast = true;
  l.below = t.first(t.size() - 1);
  l.top = top;
}

}  // namespace

std::string TokenMasker::cache_key(const Matcher& m) {
  const ThreadSet& ts = m.threads();
  std::string key;
  const uint64_t id = m.grammar().id;
  key.append(reinterpret_cast<const char*>(&id), sizeof id);
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto t = ts.thread(i);
    const auto n = static_cast<uint32_t>(t.size());
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
    key.append(reinterpret_cast<const char*>(t.data()), t.size_bytes());  // Frame: 16 bytes, no padding
  }
  return key;
}

void TokenMasker::fill(const Matcher& m, TokenMask& out) const {
  if (cache_entries_ == 0) return compute(m, out);
  std::string key = cache_key(m);
  const uint64_t h = std::hash<std::string>{}(key);
  {
    MutexLock lock(cache_mu_);
    if (const auto it = index_.find(h); it != index_.end() && it->second->key == key) {
      lru_.splice(lru_.begin(), lru_, it->second);
      out.assign(tokens_.size(), it->second->words);
      ++hits_;
      return;
    }
    ++misses_;
  }
  compute(m, out);  // outside the lock: a slow mask holds up no other
  MutexLock lock(cache_mu_);
  if (const auto it = index_.find(h); it != index_.end()) {
    lru_.erase(it->second);
    index_.erase(it);
  }
  while (lru_.size() >= cache_entries_) {
    index_.erase(std::hash<std::string>{}(lru_.back().key));
    lru_.pop_back();
  }
  lru_.push_front({std::move(key), out.words()});
  index_[h] = lru_.begin();
}

uint64_t TokenMasker::cache_hits() const {
  MutexLock lock(cache_mu_);
  return hits_;
}

uint64_t TokenMasker::cache_misses() const {
  MutexLock lock(cache_mu_);
  return misses_;
}

void TokenMasker::compute(const Matcher& m, TokenMask& out) const {
  out.reset(tokens_.size());
  const Grammar& g = m.grammar();
  const Stepper stepper(g);
  thread_local std::vector<Level> levels;
  thread_local std::vector<Frame> scratch;
  if (levels.size() < max_depth_ + 1) levels.resize(max_depth_ + 1);
  levels[0].threads = &m.threads();
  classify(g, levels[0]);

  for (size_t i = 0; i < trie_.size();) {
    const TrieNode& node = trie_[i];
    const Level& p = levels[node.depth - 1];
    Level& c = levels[node.depth];
    bool ok;
    if (p.fast) {
      const ByteDfa& d = g.dfas[g.nodes[p.top.node].dfa];
      uint32_t ns, nc;
      ok = d.step(p.top.a, static_cast<uint32_t>(p.top.b), node.byte, ns, nc);
      if (ok && !d.can_stop(ns, nc)) {
        c.fast = true;
        c.below = p.below;
        c.top = {p.top.node, ns, nc};
      } else if (ok) {  // the leaf may end here: back to whole threads
        scratch.assign(p.below.begin(), p.below.end());
        scratch.push_back({p.top.node, ns, nc});
        c.set.clear();
        if (d.has_out(ns)) c.set.push(scratch);
        else stepper.ret(scratch, c.set);
        c.threads = &c.set;
        ok = !c.set.empty();
        if (ok) classify(g, c);
      }
    } else {
      c.set.clear();
      for (size_t t = 0; t < p.threads->size(); ++t) stepper.feed(p.threads->thread(t), node.byte, c.set);
      ok = !c.set.empty();
      if (ok) {
        c.set.dedupe();
        c.threads = &c.set;
        classify(g, c);
      }
    }
    if (!ok) {
      i = node.skip;
      continue;
    }
    for (uint32_t k = 0; k < node.n_tokens; ++k) out.set(token_ids_[node.first_token + k]);
    ++i;
  }
  if (eos_ >= 0 && static_cast<size_t>(eos_) < tokens_.size() && m.complete()) out.set(eos_);
}

bool TokenMasker::accept_token(Matcher& m, TokenId id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size()) return false;
  if (id == eos_) return m.complete();
  if (banned_[static_cast<size_t>(id)]) return false;
  return m.accept(tokens_[static_cast<size_t>(id)]);
}

}  // namespace kvgate::grammar
