#include "engine/grammar/compose.h"

#include "base/error.h"

namespace kvgate::grammar {

namespace {

// Appends every node and DFA of `g` to `out`, renumbered; returns the index
// of g's root in `out`.
uint32_t append(Grammar& out, const Grammar& g) {
  const auto node_base = static_cast<uint32_t>(out.nodes.size());
  const auto dfa_base = static_cast<uint32_t>(out.dfas.size());
  out.dfas.insert(out.dfas.end(), g.dfas.begin(), g.dfas.end());
  for (Node n : g.nodes) {
    for (uint32_t& c : n.children) c += node_base;
    if (n.kind == NodeKind::kDfa) n.dfa += dfa_base;
    out.nodes.push_back(std::move(n));
  }
  return node_base + g.root;
}

uint32_t add(Grammar& out, Node n) {
  out.nodes.push_back(std::move(n));
  return static_cast<uint32_t>(out.nodes.size() - 1);
}

}  // namespace

std::shared_ptr<const Grammar> sequence(const std::vector<Part>& parts) {
  if (parts.empty()) throw Error("grammar sequence: no parts");
  auto g = std::make_shared<Grammar>();
  Node seq;
  seq.kind = NodeKind::kSeq;
  for (const Part& p : parts) {
    if (p.grammar) {
      seq.children.push_back(append(*g, *p.grammar));
    } else if (!p.literal.empty()) {
      Node lit;
      lit.kind = NodeKind::kLiteral;
      lit.literal = p.literal;
      seq.children.push_back(add(*g, std::move(lit)));
    }
  }
  g->root = add(*g, std::move(seq));
  return g;
}

std::shared_ptr<const Grammar> choice(const std::vector<std::shared_ptr<const Grammar>>& choices) {
  if (choices.empty()) throw Error("grammar choice: no choices");
  if (choices.size() == 1) return choices[0];
  auto g = std::make_shared<Grammar>();
  Node alt;
  alt.kind = NodeKind::kAlt;
  for (const auto& c : choices) alt.children.push_back(append(*g, *c));
  g->root = add(*g, std::move(alt));
  return g;
}

}  // namespace kvgate::grammar
