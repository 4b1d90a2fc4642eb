// The regular expressions a grammar's leaves are built from: a small syntax
// tree over bytes, and the parser of the JSON-schema `pattern` subset that
// produces one. A pattern speaks of characters; a JSON string holds their
// encoding. So the tree is built over the bytes of each character as it is
// written inside a JSON string (UTF-8, or its escape for `"`, `\` and the
// control characters), one encoding per character, and the first byte of
// each character is marked, so a leaf can count characters against
// minLength/maxLength while it reads bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::grammar {

struct ByteRange {
  uint8_t lo, hi;
};

struct RegexNode;
using Regex = std::shared_ptr<const RegexNode>;

struct RegexNode {
  enum class Kind { kBytes, kConcat, kAlt, kRepeat };
  Kind kind;
  std::vector<ByteRange> bytes;  // kBytes: one range per byte, in order
  bool starts_char = false;      // kBytes: its first byte begins a counted character
  std::vector<Regex> children;   // kConcat, kAlt; kRepeat: one
  uint32_t min = 0, max = 0;     // kRepeat
  bool unbounded = false;        // kRepeat: no upper bound (the leaf's length cap bounds it)
};

Regex regex_bytes(std::vector<ByteRange> bytes, bool starts_char);
Regex regex_literal(std::string_view raw);  // raw bytes, no character counted
Regex regex_concat(std::vector<Regex> parts);
Regex regex_alt(std::vector<Regex> choices);
Regex regex_repeat(Regex r, uint32_t min, uint32_t max);
Regex regex_star(Regex r);

// A set of Unicode code points, as inclusive ranges.
struct CodepointRange {
  uint32_t lo, hi;
};

// Any one character of `set` in its JSON-string encoding (counted).
Regex json_chars(const std::vector<CodepointRange>& set);

// One character of a free JSON string in any of JSON's encodings: raw UTF-8
// (well-formed, no surrogates), the short escapes, or \uXXXX (no lone
// surrogate halves). Counted.
Regex any_json_string_char();

// The pattern subset of docs/grammar.md as the content of a JSON string
// (without its quotes). The pattern must match the whole string: a leading
// ^ and trailing $ are accepted and implied when absent. Throws
// kvgate::Error naming `where` and what is unsupported.
Regex parse_pattern(std::string_view pattern, const std::string& where);

}  // namespace kvgate::grammar
