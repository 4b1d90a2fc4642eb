// A grammar leaf as a deterministic automaton over bytes, with a character
// count beside its state. Strings, patterns, formats and numbers are
// regular, so each is a DFA built once from its Regex (regex.h) by subset
// construction; the count holds minLength/maxLength (and the cap that makes
// `*` end) without unrolling them into states. For every state the DFA
// knows which further character counts can still reach acceptance
// (`reach`), so a byte is taken only when the string can still close within
// its bounds: a prefix the matcher accepts always has a valid completion.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/grammar/regex.h"

namespace kvgate::grammar {

// The hard cap on the characters a leaf counts: no string is longer.
inline constexpr uint32_t kMaxCountedChars = 1024;

// A set of character counts 0..kMaxCountedChars.
class LengthSet {
 public:
  void set(uint32_t k) { w_[k / 64] |= uint64_t{1} << (k % 64); }
  bool empty() const;
  // Whether some count in [lo, hi] is in the set.
  bool any_in(uint32_t lo, uint32_t hi) const;
  // Adds every member of `other` plus `shift`, dropping what passes `cap`;
  // says whether anything was added.
  bool merge_shifted(const LengthSet& other, uint32_t shift, uint32_t cap);

 private:
  static constexpr size_t kWords = kMaxCountedChars / 64 + 1;
  std::array<uint64_t, kWords> w_{};
};

class ByteDfa {
 public:
  // Compiles `r`; strings read as r must count between min_chars and
  // max_chars characters (max_chars ≤ kMaxCountedChars). Throws
  // kvgate::Error naming `what` when the automaton would pass max_states.
  static ByteDfa build(const Regex& r, uint32_t min_chars, uint32_t max_chars, const char* what,
                       uint32_t max_states = 4096);

  uint32_t start() const { return 0; }
  // Whether some string of the leaf exists at all.
  bool satisfiable() const { return viable(0, 0); }

  // Reads `byte` in `state` with `chars` counted; on success the new state
  // and count, from which acceptance is still reachable within the bounds.
  bool step(uint32_t state, uint32_t chars, uint8_t byte, uint32_t& next_state, uint32_t& next_chars) const {
    const int32_t t = next_[state * 256u + byte];
    if (t < 0) return false;
    const uint32_t c = chars + counts_[state * 256u + byte];
    if (!viable(static_cast<uint32_t>(t), c)) return false;
    next_state = static_cast<uint32_t>(t);
    next_chars = c;
    return true;
  }
  // Whether the leaf may end here.
  bool can_stop(uint32_t state, uint32_t chars) const {
    return accepting_[state] && chars >= min_chars_ && chars <= max_chars_;
  }
  // Whether any byte may follow `state` (a leaf that may stop and has
  // nothing to read is finished at once).
  bool has_out(uint32_t state) const { return has_out_[state]; }
  size_t states() const { return accepting_.size(); }

 private:
  bool viable(uint32_t state, uint32_t chars) const {
    if (chars > max_chars_) return false;
    const uint32_t lo = chars >= min_chars_ ? 0 : min_chars_ - chars;
    return reach_[state].any_in(lo, max_chars_ - chars);
  }

  std::vector<int32_t> next_;     // [state * 256 + byte]: the next state, -1 for none
  std::vector<uint8_t> counts_;   // [state * 256 + byte]: 1 when the byte begins a character
  std::vector<uint8_t> accepting_;
  std::vector<uint8_t> has_out_;
  std::vector<LengthSet> reach_;  // the character counts that lead from a state to acceptance
  uint32_t min_chars_ = 0, max_chars_ = 0;
};

}  // namespace kvgate::grammar
