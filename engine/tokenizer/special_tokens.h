// SpecialTokenSplitter: cuts raw text around special and added tokens before
// any pre-tokenization, the way llama.cpp (and HF `tokenizers`) do.
//
// Semantics, which the reference vectors depend on: special tokens are taken
// one at a time, longest text first; each one splits every remaining raw-text
// fragment at all of its non-overlapping occurrences, left to right. Control
// and unknown tokens take part only with parse_special (so user text can never
// inject `<|endoftext|>`); user-defined tokens do without it too (mpt's runs
// of spaces), unless the caller matches them itself (kNone: the chat prompt
// encoder, which keeps a message's `<start_of_turn>` text).
//
// Cost: a byte trie over the candidate texts finds, in one pass, which special
// tokens occur at all; the ordered splitting then runs only for those, so text
// without any special token costs one scan.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cache/ids.h"

namespace kvgate {

class Vocab;

// Which special tokens cut the text.
enum class SplitTokens {
  kNone,         // none: the text is all raw
  kUserDefined,  // user-defined ones only (llama.cpp without parse_special)
  kAll,          // control, unknown and user-defined (parse_special)
};

struct TextFragment {
  TokenId token;          // kNoToken for raw text
  std::string_view text;  // the raw text, or the special token's text
};

class SpecialTokenSplitter {
 public:
  explicit SpecialTokenSplitter(const Vocab& vocab);

  // Replaces `out` with the fragments of `text`, in order.
  void split(std::string_view text, SplitTokens which, std::vector<TextFragment>& out) const;

 private:
  struct Candidate {
    TokenId id;
    std::string_view text;  // points into the Vocab
    bool always;            // user-defined: split even without parse_special
  };
  struct TrieNode {
    std::vector<std::pair<unsigned char, int32_t>> next;  // sorted by byte
    int32_t candidate = -1;                               // a candidate ends here
  };

  int32_t child(int32_t node, unsigned char b) const;
  void mark_present(std::string_view text, bool parse_special, std::vector<char>& present) const;

  std::vector<Candidate> candidates_;  // in splitting order: longest first
  std::vector<TrieNode> trie_;         // trie_[0] is the root
  std::array<int32_t, 256> root_{};    // root's children, for the per-byte fast path
  bool any_always_ = false;
};

}  // namespace kvgate
