// The byte-level matcher over a compiled Grammar: a pushdown automaton with
// explicit stacks, kept as a set of stacks where the grammar is ambiguous
// (llama.cpp's grammar engine does the same), so an anyOf whose branches
// share a prefix, or keys of optional properties that share one, are
// followed together until a byte tells them apart.
//
// Each stack (a thread) is a vector of 16-byte frames: the positions in
// the sequences and lists being read, and on top the leaf or literal that
// reads the next byte. A thread is kept only while it can still complete
// (every leaf checks that its string can close within its bounds, every
// unsatisfiable branch was compiled away), so any accepted prefix extends
// to a whole valid value and generation cannot get stuck. Identical threads
// are merged after every byte, so ambiguity never multiplies.
//
// Copying a Matcher copies its frames (a few dozen bytes in the usual
// single-thread case) and a shared_ptr to the grammar.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"

namespace kvgate::grammar {

// One position on a thread's stack. kSeq: a = the next child. kList: a =
// phase (0 before open, 1 expecting close, 2 expecting sep, 3 in an item),
// b = items read. kLiteral: a = bytes read. kDfa: a = DFA state, b =
// characters counted. kInt: a = digits read | (1 << 16) after a minus, b =
// magnitude so far.
struct Frame {
  uint32_t node;
  uint32_t a;
  int64_t b;
  bool operator==(const Frame&) const = default;
};

// A set of threads, stored flat.
class ThreadSet {
 public:
  size_t size() const { return ends_.size(); }
  bool empty() const { return ends_.empty(); }
  std::span<const Frame> thread(size_t i) const {
    const uint32_t begin = i ? ends_[i - 1] : 0;
    return {frames_.data() + begin, ends_[i] - begin};
  }
  void push(std::span<const Frame> t) {
    frames_.insert(frames_.end(), t.begin(), t.end());
    ends_.push_back(static_cast<uint32_t>(frames_.size()));
  }
  void clear() {
    frames_.clear();
    ends_.clear();
  }
  // Drops threads equal to an earlier one.
  void dedupe();

 private:
  std::vector<Frame> frames_;
  std::vector<uint32_t> ends_;
};

// The stepping rules, shared by Matcher and the token mask's trie walk.
class Stepper {
 public:
  explicit Stepper(const Grammar& g) : g_(g) {}
  // The threads at the start of the grammar.
  void start(ThreadSet& out) const;
  // Every thread that `t` becomes after reading `byte`, appended to `out`.
  void feed(std::span<const Frame> t, uint8_t byte, ThreadSet& out) const;
  // Whether `t` may end here (a whole value has been read).
  bool complete(std::span<const Frame> t) const;
  // `t` with its finished top frame popped, continued in its parent.
  void ret(std::vector<Frame>& t, ThreadSet& out) const;

 private:
  void enter(std::vector<Frame>& t, uint32_t node, ThreadSet& out) const;
  void ret_empty(std::vector<Frame>& t, ThreadSet& out) const;
  bool int_step(const Node& n, Frame& f, uint8_t byte) const;
  static bool int_accepting(const Node& n, const Frame& f);

  const Grammar& g_;
};

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> grammar);

  // Reads one byte when the grammar allows it (true); otherwise the state
  // is left as it was (false).
  bool accept(uint8_t byte);
  // Reads every byte or, at the first refused one, none (false).
  bool accept(std::string_view bytes);
  // A whole valid value has been read (the output may end here).
  bool complete() const;
  // Some byte may still follow.
  bool can_continue() const;

  const Grammar& grammar() const { return *grammar_; }
  const ThreadSet& threads() const { return threads_; }

 private:
  std::shared_ptr<const Grammar> grammar_;
  ThreadSet threads_;
};

}  // namespace kvgate::grammar
