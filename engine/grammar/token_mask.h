// Which tokens of a vocabulary may come next under a Matcher: the logit
// mask of constrained decoding. The vocabulary arrives as each token id's
// byte string (this library knows nothing of tokenizers), and a token is
// allowed iff the matcher accepts all of its bytes in sequence, so
// multi-byte and multi-character tokens, and tokens that close a string and
// open the next key, are judged exactly. EOS is allowed iff the matcher is
// complete; empty and special tokens never are.
//
// A mask depends only on the grammar and the matcher's threads, and the
// requests of an agent loop or a batch of structured-output calls share
// their grammar and pass through the same states (the same key at the same
// character count): with a cache (cache_bytes > 0) each such mask is
// computed once, keyed by the grammar's id and the exact threads, and
// copied thereafter, least recently used first out.
//
// The token strings are put once into a trie, laid out in preorder with
// each node's subtree end, and every mask is one walk of it: a node's
// state is its parent's after one byte, and a refused byte skips the whole
// subtree (every token with that prefix). Inside a leaf (the middle of a
// string or number), where most tokens live and most are allowed, the walk
// carries only the leaf's DFA state and count, not a copy of the stack.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"

#include "cache/ids.h"
#include "engine/grammar/matcher.h"

namespace kvgate::grammar {

class TokenMask {
 public:
  void reset(size_t n) {
    n_ = n;
    words_.assign((n + 63) / 64, 0);
  }
  void assign(size_t n, const std::vector<uint64_t>& words) {
    n_ = n;
    words_ = words;
  }
  void set(TokenId id) { words_[static_cast<size_t>(id) / 64] |= uint64_t{1} << (id % 64); }
  bool test(TokenId id) const { return (words_[static_cast<size_t>(id) / 64] >> (id % 64)) & 1; }
  size_t size() const { return n_; }
  size_t count() const;
  const std::vector<uint64_t>& words() const { return words_; }  // bit id%64 of word id/64

 private:
  size_t n_ = 0;
  std::vector<uint64_t> words_;
};

class TokenMasker {
 public:
  // tokens[id] is token id's byte string; `special` lists the ids never
  // allowed as text (control tokens), `eos` the one allowed at the end.
  // `cache_bytes`: the most that cached masks may hold (0: none). Thread-safe either way.
  TokenMasker(const std::vector<std::string>& tokens, TokenId eos, const std::vector<TokenId>& special = {},
              size_t cache_bytes = 0);

  void fill(const Matcher& m, TokenMask& out) const;
  TokenMask mask(const Matcher& m) const {
    TokenMask out;
    fill(m, out);
    return out;
  }
  // Advances `m` by token `id` (EOS: only when complete, and leaves `m` as
  // it is); false when the token is not allowed, `m` unchanged.
  bool accept_token(Matcher& m, TokenId id) const;

  size_t vocab_size() const { return tokens_.size(); }
  TokenId eos() const { return eos_; }
  uint64_t cache_hits() const;
  uint64_t cache_misses() const;

 private:
  struct TrieNode {
    uint8_t byte;
    uint16_t depth;       // 1 for a first byte
    uint32_t skip;        // the index after this node's subtree
    uint32_t first_token; // into token_ids_: the tokens that end here
    uint32_t n_tokens;
  };

  std::vector<std::string> tokens_;
  std::vector<bool> banned_;  // empty, special, or EOS: never allowed as text
  TokenId eos_;
  std::vector<TrieNode> trie_;
  std::vector<TokenId> token_ids_;
  size_t max_depth_ = 0;

  // The mask itself: one walk of the trie.
  void compute(const Matcher& m, TokenMask& out) const;
  // The cache: entries most recent first; the index by the key's hash
  // (a colliding key replaces the entry it collides with).
  struct CachedMask {
    std::string key;
    std::vector<uint64_t> words;
  };
  static std::string cache_key(const Matcher& m);
  size_t entry_bytes() const { return sizeof(CachedMask) + ((tokens_.size() + 63) / 64) * 8 + 64; }

  const size_t cache_entries_;
  mutable Mutex cache_mu_;
  mutable std::list<CachedMask> lru_ ABSL_GUARDED_BY(cache_mu_);
  mutable std::unordered_map<uint64_t, std::list<CachedMask>::iterator> index_ ABSL_GUARDED_BY(cache_mu_);
  mutable uint64_t hits_ ABSL_GUARDED_BY(cache_mu_) = 0;
  mutable uint64_t misses_ ABSL_GUARDED_BY(cache_mu_) = 0;
};

}  // namespace kvgate::grammar
