// A compiled grammar: what json_schema.h makes of a schema and matcher.h
// runs. It is a graph of nodes, acyclic (recursion is unrolled to its
// depth cap when compiled), shared read-only by every matcher and mask
// computation of every request that uses the same schema.
//
// Structure (objects, arrays, unions) is a pushdown part: sequences,
// alternatives and delimited lists, whose positions the matcher keeps on a
// stack of frames. Everything regular (strings, patterns, formats, numbers)
// is a leaf: a ByteDfa with its character count, or an integer range, read
// byte by byte in the top frame without touching the stack below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/grammar/byte_dfa.h"

namespace kvgate::grammar {

enum class NodeKind : uint8_t {
  kNever,    // matches nothing (an unsatisfiable branch; compiled away where it can be)
  kSeq,      // children in order
  kAlt,      // any one child
  kLiteral,  // exactly `literal`
  kDfa,      // a regular leaf: dfas[dfa]
  kInt,      // a decimal integer in [lo, hi]: no leading zeros, no "-0", at most max_digits digits
  kList,     // open item (sep item)* close, between min_items and max_items items
};

struct Node {
  NodeKind kind = NodeKind::kNever;
  std::vector<uint32_t> children;  // kSeq: parts; kAlt: choices; kList: {item}
  std::string literal;
  uint32_t dfa = 0;
  int64_t lo = 0, hi = 0;
  uint32_t max_digits = 0;
  uint32_t min_items = 0, max_items = 0;
  char open = '[', close = ']', sep = ',';
};

// A number no other grammar of this process has: what the token masker's
// cache keys a grammar by (an address can be reused once one is freed).
uint64_t next_grammar_id();

struct Grammar {
  std::vector<Node> nodes;
  std::vector<ByteDfa> dfas;
  uint32_t root = 0;
  uint64_t id = next_grammar_id();
};

}  // namespace kvgate::grammar
