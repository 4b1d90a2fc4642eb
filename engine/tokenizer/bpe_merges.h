// BpeMerges: the rank table of a byte-level BPE vocabulary, keyed by symbol ids.
//
// `tokenizer.ggml.merges` lists "left right" pairs, best (lowest rank) first.
// Every string that takes part in a merge gets a symbol id: the vocabulary id
// when the string is a token, otherwise a fresh id >= n_vocab (a well-formed
// vocabulary never needs one, but a merge result missing from the vocabulary
// must still merge further exactly as the reference does). Lookups are then
// integer hashes, not string compares, which keeps the merge loop cheap.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/model/gguf.h"
#include "engine/tokenizer/vocab.h"

namespace kvgate {

class BpeMerges {
 public:
  struct Merge {
    int32_t rank;    // lower merges first
    int32_t result;  // symbol id of left+right
  };
  static constexpr int32_t kNoSymbol = -1;

  // Reads `tokenizer.ggml.merges`; throws kvgate::Error if missing or malformed.
  BpeMerges(const GgufFile& f, const Vocab& vocab);

  // The merge of two adjacent symbols, or nullptr if they never merge.
  const Merge* find(int32_t left, int32_t right) const;

  // Symbol id of the string `text`, or kNoSymbol if no token or merge uses it.
  int32_t symbol(std::string_view text) const;

  size_t size() const { return count_; }

 private:
  struct Slot {
    uint64_t key;
    Merge merge;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t key(int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  }
  size_t slot_of(uint64_t k) const;

  const Vocab& vocab_;
  std::vector<Slot> slots_;  // open addressing, linear probing, power-of-two size
  size_t count_ = 0;
  std::vector<std::pair<std::string, int32_t>> extra_;  // non-token symbols, sorted by text
};

}  // namespace kvgate
