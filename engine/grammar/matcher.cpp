#include "engine/grammar/matcher.h"

#include <atomic>
#include <cstring>

namespace kvgate::grammar {

uint64_t next_grammar_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void ThreadSet::dedupe() {
  if (ends_.size() < 2) return;
  ThreadSet out;
  for (size_t i = 0; i < size(); ++i) {
    const auto t = thread(i);
    bool seen = false;
    for (size_t j = 0; j < out.size() && !seen; ++j) {
      const auto u = out.thread(j);
      seen = u.size() == t.size() && std::memcmp(u.data(), t.data(), t.size() * sizeof(Frame)) == 0;
    }
    if (!seen) out.push(t);
  }
  *this = std::move(out);
}

namespace {

constexpr int64_t kPow10[] = {1,
                              10,
                              100,
                              1000,
                              10000,
                              100000,
                              1000000,
                              10000000,
                              100000000,
                              1000000000,
                              10000000000,
                              100000000000,
                              1000000000000,
                              10000000000000,
                              100000000000000,
                              1000000000000000,
                              10000000000000000};

constexpr uint32_t kNeg = 1u << 16;

}  // namespace

void Stepper::start(ThreadSet& out) const {
  std::vector<Frame> t;
  enter(t, g_.root, out);
  out.dedupe();
}

void Stepper::enter(std::vector<Frame>& t, uint32_t node, ThreadSet& out) const {
  const Node& n = g_.nodes[node];
  switch (n.kind) {
    case NodeKind::kNever:
      return;
    case NodeKind::kSeq:
      if (n.children.empty()) return ret_empty(t, out);
      if (n.children.size() > 1) t.push_back({node, 1, 0});
      return enter(t, n.children[0], out);
    case NodeKind::kAlt:
      for (size_t i = 0; i + 1 < n.children.size(); ++i) {
        std::vector<Frame> copy = t;
        enter(copy, n.children[i], out);
      }
      if (!n.children.empty()) enter(t, n.children.back(), out);
      return;
    case NodeKind::kLiteral:
      if (n.literal.empty()) return ret_empty(t, out);
      t.push_back({node, 0, 0});
      out.push(t);
      return;
    case NodeKind::kDfa: {
      const ByteDfa& d = g_.dfas[n.dfa];
      t.push_back({node, d.start(), 0});
      if (d.can_stop(d.start(), 0) && !d.has_out(d.start())) return ret(t, out);
      out.push(t);
      return;
    }
    case NodeKind::kInt:
    case NodeKind::kList:
      t.push_back({node, 0, 0});
      out.push(t);
      return;
  }
}

// A node that reads nothing finished as soon as it was entered: its parent
// goes on (the top of `t` is that parent, or `t` is empty: complete).
void Stepper::ret_empty(std::vector<Frame>& t, ThreadSet& out) const {
  t.push_back({0, 0, 0});  // a stand-in for the finished node, popped by ret
  ret(t, out);
}

void Stepper::ret(std::vector<Frame>& t, ThreadSet& out) const {
  t.pop_back();
  if (t.empty()) {
    out.push(t);
    return;
  }
  Frame& f = t.back();
  const Node& n = g_.nodes[f.node];
  if (n.kind == NodeKind::kSeq) {
    const uint32_t idx = f.a;
    // The last part is entered in the sequence's place (a tail call), so
    // stacks do not grow with sequences that end in sequences.
    if (idx + 1 == n.children.size()) t.pop_back();
    else ++f.a;
    return enter(t, n.children[idx], out);
  }
  // A list's item finished.
  f.b += 1;
  const bool more = static_cast<uint64_t>(f.b) < n.max_items;
  const bool enough = static_cast<uint64_t>(f.b) >= n.min_items;
  if (more && enough) {
    std::vector<Frame> copy = t;
    copy.back().a = 2;
    out.push(copy);
    t.back().a = 1;
    out.push(t);
  } else if (more) {
    f.a = 2;
    out.push(t);
  } else {
    f.a = 1;
    out.push(t);
  }
}

bool Stepper::int_accepting(const Node& n, const Frame& f) {
  const uint32_t digits = f.a & 0xFFFF;
  if (digits == 0) return false;
  const int64_t v = (f.a & kNeg) ? -f.b : f.b;
  return v >= n.lo && v <= n.hi;
}

bool Stepper::int_step(const Node& n, Frame& f, uint8_t byte) const {
  const uint32_t digits = f.a & 0xFFFF;
  const bool neg = f.a & kNeg;
  if (byte == '-') {
    if (digits != 0 || neg || n.lo > -1) return false;
    f.a |= kNeg;
    return true;
  }
  if (byte < '0' || byte > '9') return false;
  if (digits > 0 && f.b == 0) return false;  // no leading zeros
  const int64_t m = f.b * 10 + (byte - '0');
  const uint32_t nd = digits + 1;
  if (nd > n.max_digits || (neg && m == 0)) return false;
  // Some completion (0 or more further digits) must land in [lo, hi].
  bool feasible = false;
  for (uint32_t j = 0; nd + j <= n.max_digits && !feasible; ++j) {
    if (m == 0 && j > 0) break;
    const int64_t low = m * kPow10[j], high = low + kPow10[j] - 1;
    const int64_t a = neg ? -high : low, b = neg ? -low : high;
    feasible = a <= n.hi && b >= n.lo;
  }
  if (!feasible) return false;
  f.a = nd | (neg ? kNeg : 0);
  f.b = m;
  return true;
}

void Stepper::feed(std::span<const Frame> t, uint8_t byte, ThreadSet& out) const {
  if (t.empty()) return;
  const Frame& top = t.back();
  const Node& n = g_.nodes[top.node];
  switch (n.kind) {
    case NodeKind::kLiteral: {
      if (static_cast<uint8_t>(n.literal[top.a]) != byte) return;
      std::vector<Frame> c(t.begin(), t.end());
      if (++c.back().a == n.literal.size()) return ret(c, out);
      out.push(c);
      return;
    }
    case NodeKind::kDfa: {
      const ByteDfa& d = g_.dfas[n.dfa];
      uint32_t ns, nc;
      if (d.step(top.a, static_cast<uint32_t>(top.b), byte, ns, nc)) {
        std::vector<Frame> c(t.begin(), t.end());
        c.back().a = ns;
        c.back().b = nc;
        if (d.can_stop(ns, nc) && !d.has_out(ns)) ret(c, out);
        else out.push(c);
      }
      // A leaf that may stop but could go on (a number): the byte may also
      // belong to what follows it.
      if (d.can_stop(top.a, static_cast<uint32_t>(top.b))) {
        std::vector<Frame> c(t.begin(), t.end());
        ThreadSet after;
        ret(c, after);
        for (size_t i = 0; i < after.size(); ++i) feed(after.thread(i), byte, out);
      }
      return;
    }
    case NodeKind::kInt: {
      Frame f = top;
      if (int_step(n, f, byte)) {
        std::vector<Frame> c(t.begin(), t.end());
        c.back() = f;
        out.push(c);
      }
      if (int_accepting(n, top)) {
        std::vector<Frame> c(t.begin(), t.end());
        ThreadSet after;
        ret(c, after);
        for (size_t i = 0; i < after.size(); ++i) feed(after.thread(i), byte, out);
      }
      return;
    }
    case NodeKind::kList: {
      std::vector<Frame> c(t.begin(), t.end());
      Frame& f = c.back();
      if (f.a == 0 && byte == static_cast<uint8_t>(n.open)) {
        if (n.min_items == 0) {
          std::vector<Frame> closed = c;
          closed.back().a = 1;
          out.push(closed);
        }
        if (n.max_items > 0) {
          f.a = 3;
          enter(c, n.children[0], out);
        }
      } else if (f.a == 1 && byte == static_cast<uint8_t>(n.close)) {
        ret(c, out);
      } else if (f.a == 2 && byte == static_cast<uint8_t>(n.sep)) {
        f.a = 3;
        enter(c, n.children[0], out);
      }
      return;
    }
    case NodeKind::kNever:
    case NodeKind::kSeq:
    case NodeKind::kAlt:
      return;  // never on top
  }
}

bool Stepper::complete(std::span<const Frame> t) const {
  if (t.empty()) return true;
  const Frame& top = t.back();
  const Node& n = g_.nodes[top.node];
  bool may_stop = false;
  if (n.kind == NodeKind::kDfa) may_stop = g_.dfas[n.dfa].can_stop(top.a, static_cast<uint32_t>(top.b));
  else if (n.kind == NodeKind::kInt) may_stop = int_accepting(n, top);
  if (!may_stop) return false;
  std::vector<Frame> c(t.begin(), t.end());
  ThreadSet after;
  ret(c, after);
  for (size_t i = 0; i < after.size(); ++i)
    if (complete(after.thread(i))) return true;
  return false;
}

Matcher::Matcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  Stepper(*grammar_).start(threads_);
}

bool Matcher::accept(uint8_t byte) {
  const Stepper s(*grammar_);
  ThreadSet next;
  for (size_t i = 0; i < threads_.size(); ++i) s.feed(threads_.thread(i), byte, next);
  if (next.empty()) return false;
  next.dedupe();
  threads_ = std::move(next);
  return true;
}

bool Matcher::accept(std::string_view bytes) {
  Matcher copy = *this;
  for (char c : bytes)
    if (!copy.accept(static_cast<uint8_t>(c))) return false;
  *this = std::move(copy);
  return true;
}

bool Matcher::complete() const {
  const Stepper s(*grammar_);
  for (size_t i = 0; i < threads_.size(); ++i)
    if (s.complete(threads_.thread(i))) return true;
  return false;
}

bool Matcher::can_continue() const {
  const Stepper s(*grammar_);
  ThreadSet next;
  for (int b = 0; b < 256; ++b) {
    for (size_t i = 0; i < threads_.size(); ++i) s.feed(threads_.thread(i), static_cast<uint8_t>(b), next);
    if (!next.empty()) return true;
  }
  return false;
}

}  // namespace kvgate::grammar
