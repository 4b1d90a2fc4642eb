#include "engine/grammar/byte_dfa.h"

#include <algorithm>
#include <map>
#include <string>

#include "base/error.h"

namespace kvgate::grammar {

bool LengthSet::empty() const {
  for (uint64_t w : w_)
    if (w) return false;
  return true;
}

bool LengthSet::any_in(uint32_t lo, uint32_t hi) const {
  if (lo > hi || lo > kMaxCountedChars) return false;
  hi = std::min(hi, kMaxCountedChars);
  for (uint32_t wi = lo / 64; wi <= hi / 64; ++wi) {
    uint64_t w = w_[wi];
    if (wi == lo / 64) w &= ~uint64_t{0} << (lo % 64);
    if (wi == hi / 64 && hi % 64 != 63) w &= (uint64_t{1} << (hi % 64 + 1)) - 1;
    if (w) return true;
  }
  return false;
}

bool LengthSet::merge_shifted(const LengthSet& other, uint32_t shift, uint32_t cap) {
  bool changed = false;
  for (uint32_t k = 0; k + shift <= cap; ++k) {
    const uint64_t w = other.w_[k / 64];
    if (k % 64 == 0 && w == 0) {
      k += 63;
      continue;
    }
    if ((w >> (k % 64)) & 1) {
      const uint32_t t = k + shift;
      uint64_t& dst = w_[t / 64];
      const uint64_t bit = uint64_t{1} << (t % 64);
      if (!(dst & bit)) {
        dst |= bit;
        changed = true;
      }
    }
  }
  return changed;
}

namespace {

// Thompson's construction: byte-range edges (some counted) and epsilons.
struct Nfa {
  struct Edge {
    uint8_t lo, hi;
    bool counts;
    uint32_t to;
  };
  std::vector<std::vector<Edge>> edges;
  std::vector<std::vector<uint32_t>> eps;

  // Repeats share their subexpression in the regex but are copied here, so
  // nested ones ("(a{100}){100}") multiply: bounded, like the DFA's states.
  static constexpr size_t kMaxStates = size_t{1} << 16;

  uint32_t add() {
    if (edges.size() >= kMaxStates)
      throw Error("json schema: the pattern is too complex an automaton to build (over " +
                  std::to_string(kMaxStates) + " NFA states)");
    edges.emplace_back();
    eps.emplace_back();
    return static_cast<uint32_t>(edges.size() - 1);
  }

  // Builds `r` from state `from`; returns the state it ends in.
  uint32_t build(const Regex& r, uint32_t from) {
    switch (r->kind) {
      case RegexNode::Kind::kBytes: {
        uint32_t at = from;
        for (size_t i = 0; i < r->bytes.size(); ++i) {
          const uint32_t to = add();
          edges[at].push_back({r->bytes[i].lo, r->bytes[i].hi, i == 0 && r->starts_char, to});
          at = to;
        }
        return at;
      }
      case RegexNode::Kind::kConcat: {
        uint32_t at = from;
        for (const Regex& c : r->children) at = build(c, at);
        return at;
      }
      case RegexNode::Kind::kAlt: {
        const uint32_t end = add();
        for (const Regex& c : r->children) {
          const uint32_t s = add();
          eps[from].push_back(s);
          eps[build(c, s)].push_back(end);
        }
        return end;
      }
      case RegexNode::Kind::kRepeat: {
        uint32_t at = from;
        for (uint32_t i = 0; i < r->min; ++i) at = build(r->children[0], at);
        if (r->unbounded) {
          const uint32_t loop = add();
          eps[at].push_back(loop);
          const uint32_t body_end = build(r->children[0], loop);
          eps[body_end].push_back(loop);
          return loop;
        }
        const uint32_t end = add();
        for (uint32_t i = r->min; i < r->max; ++i) {
          eps[at].push_back(end);
          at = build(r->children[0], at);
        }
        eps[at].push_back(end);
        return end;
      }
    }
    return from;
  }

  void closure(std::vector<uint32_t>& set) const {
    std::vector<uint32_t> stack = set;
    std::vector<bool> seen(edges.size());
    for (uint32_t s : set) seen[s] = true;
    while (!stack.empty()) {
      const uint32_t s = stack.back();
      stack.pop_back();
      for (uint32_t t : eps[s])
        if (!seen[t]) {
          seen[t] = true;
          set.push_back(t);
          stack.push_back(t);
        }
    }
    std::sort(set.begin(), set.end());
  }
};

}  // namespace

ByteDfa ByteDfa::build(const Regex& r, uint32_t min_chars, uint32_t max_chars, const char* what,
                       uint32_t max_states) {
  Nfa nfa;
  const uint32_t nfa_start = nfa.add();
  const uint32_t nfa_accept = nfa.build(r, nfa_start);

  ByteDfa d;
  d.min_chars_ = min_chars;
  d.max_chars_ = std::min(max_chars, kMaxCountedChars);
  std::map<std::vector<uint32_t>, uint32_t> ids;
  std::vector<std::vector<uint32_t>> sets;
  std::vector<uint32_t> start{nfa_start};
  nfa.closure(start);
  ids[start] = 0;
  sets.push_back(start);
  // The subset construction's work, bounded as its states are: a pattern
  // like ".*" followed by many "." keeps every state's NFA set large, and
  // 4,096 such states cost seconds before the state cap is reached (a
  // request's schema must not). Real patterns and formats take a few
  // hundred thousand steps.
  constexpr uint64_t kMaxWork = uint64_t{1} << 22;
  uint64_t steps = 0;
  for (size_t s = 0; s < sets.size(); ++s) {
    d.next_.resize((s + 1) * 256, -1);
    d.counts_.resize((s + 1) * 256, 0);
    std::vector<uint32_t> prev_move;
    int32_t prev_target = -1;
    for (int b = 0; b < 256; ++b) {
      std::vector<uint32_t> move;
      uint8_t counted = 0;
      for (uint32_t q : sets[s]) {
        steps += nfa.edges[q].size() + 1;
        for (const Nfa::Edge& e : nfa.edges[q])
          if (b >= e.lo && b <= e.hi) {
            move.push_back(e.to);
            counted |= e.counts ? 1 : 0;
          }
      }
      if (steps > kMaxWork)
        throw Error(std::string("json schema: ") + what + " is too complex an automaton to build (over " +
                    std::to_string(kMaxWork) + " steps)");
      if (move.empty()) continue;
      std::sort(move.begin(), move.end());
      move.erase(std::unique(move.begin(), move.end()), move.end());
      int32_t target;
      if (move == prev_move) {
        target = prev_target;
      } else {
        prev_move = move;
        nfa.closure(move);
        auto [it, fresh] = ids.emplace(move, static_cast<uint32_t>(sets.size()));
        if (fresh) {
          if (sets.size() >= max_states)
            throw Error(std::string("json schema: ") + what + " needs more than " + std::to_string(max_states) +
                        " automaton states");
          sets.push_back(move);
        }
        target = static_cast<int32_t>(it->second);
        prev_target = target;
      }
      d.next_[s * 256 + static_cast<size_t>(b)] = target;
      d.counts_[s * 256 + static_cast<size_t>(b)] = counted;
    }
  }
  const size_t n = sets.size();
  d.accepting_.resize(n);
  for (size_t s = 0; s < n; ++s)
    d.accepting_[s] = std::binary_search(sets[s].begin(), sets[s].end(), nfa_accept) ? 1 : 0;

  // reach: the least fixed point of reach[s] = {0 if accepting} ∪ (reach[t] + counted) over edges s→t.
  std::vector<std::vector<std::pair<uint32_t, uint8_t>>> succ(n);
  for (size_t s = 0; s < n; ++s) {
    for (int b = 0; b < 256; ++b) {
      const int32_t t = d.next_[s * 256 + static_cast<size_t>(b)];
      if (t >= 0) succ[s].push_back({static_cast<uint32_t>(t), d.counts_[s * 256 + static_cast<size_t>(b)]});
    }
    std::sort(succ[s].begin(), succ[s].end());
    succ[s].erase(std::unique(succ[s].begin(), succ[s].end()), succ[s].end());
  }
  std::vector<std::vector<uint32_t>> pred(n);
  for (size_t s = 0; s < n; ++s)
    for (auto [t, c] : succ[s]) pred[t].push_back(static_cast<uint32_t>(s));
  d.reach_.resize(n);
  std::vector<uint32_t> work;
  std::vector<bool> queued(n);
  for (size_t s = 0; s < n; ++s)
    if (d.accepting_[s]) {
      d.reach_[s].set(0);
      for (uint32_t p : pred[s])
        if (!queued[p]) {
          queued[p] = true;
          work.push_back(p);
        }
    }
  while (!work.empty()) {
    const uint32_t s = work.back();
    work.pop_back();
    queued[s] = false;
    bool changed = false;
    for (auto [t, c] : succ[s]) changed |= d.reach_[s].merge_shifted(d.reach_[t], c, d.max_chars_);
    if (changed)
      for (uint32_t p : pred[s])
        if (!queued[p]) {
          queued[p] = true;
          work.push_back(p);
        }
  }
  // Edges into states that can never accept are no edges.
  d.has_out_.resize(n);
  for (size_t s = 0; s < n; ++s)
    for (int b = 0; b < 256; ++b) {
      int32_t& t = d.next_[s * 256 + static_cast<size_t>(b)];
      if (t >= 0 && d.reach_[static_cast<size_t>(t)].empty()) t = -1;
      if (t >= 0) d.has_out_[s] = 1;
    }
  return d;
}

}  // namespace kvgate::grammar
