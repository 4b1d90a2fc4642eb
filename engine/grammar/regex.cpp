#include "engine/grammar/regex.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"

namespace kvgate::grammar {

Regex regex_bytes(std::vector<ByteRange> bytes, bool starts_char) {
  auto n = std::make_shared<RegexNode>();
  n->kind = RegexNode::Kind::kBytes;
  n->bytes = std::move(bytes);
  n->starts_char = starts_char;
  return n;
}

Regex regex_literal(std::string_view raw) {
  std::vector<ByteRange> bytes;
  for (char c : raw) bytes.push_back({static_cast<uint8_t>(c), static_cast<uint8_t>(c)});
  return regex_bytes(std::move(bytes), false);
}

Regex regex_concat(std::vector<Regex> parts) {
  if (parts.size() == 1) return parts[0];
  auto n = std::make_shared<RegexNode>();
  n->kind = RegexNode::Kind::kConcat;
  n->children = std::move(parts);
  return n;
}

Regex regex_alt(std::vector<Regex> choices) {
  if (choices.size() == 1) return choices[0];
  auto n = std::make_shared<RegexNode>();
  n->kind = RegexNode::Kind::kAlt;
  n->children = std::move(choices);
  return n;
}

Regex regex_repeat(Regex r, uint32_t min, uint32_t max) {
  auto n = std::make_shared<RegexNode>();
  n->kind = RegexNode::Kind::kRepeat;
  n->children = {std::move(r)};
  n->min = min;
  n->max = max;
  return n;
}

Regex regex_star(Regex r) {
  auto n = std::make_shared<RegexNode>();
  n->kind = RegexNode::Kind::kRepeat;
  n->children = {std::move(r)};
  n->unbounded = true;
  return n;
}

namespace {

constexpr uint32_t kMaxCodepoint = 0x10FFFF;

std::string utf8_encode(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

// The code points lo..hi (all of one UTF-8 length class after splitting) as
// sequences of byte ranges: the range is split until every byte position
// varies independently (the utf8-ranges construction of Rust's regex crate).
void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<std::vector<ByteRange>>& out) {
  if (lo > hi) return;
  if (lo <= 0xDFFF && hi >= 0xD800) {  // surrogates are no characters
    if (lo < 0xD800) utf8_sequences(lo, 0xD7FF, out);
    if (hi > 0xDFFF) utf8_sequences(0xE000, hi, out);
    return;
  }
  for (uint32_t boundary : {0x7Fu, 0x7FFu, 0xFFFFu}) {
    if (lo <= boundary && hi > boundary) {
      utf8_sequences(lo, boundary, out);
      utf8_sequences(boundary + 1, hi, out);
      return;
    }
  }
  const size_t len = utf8_encode(lo).size();
  for (size_t i = 1; i < len; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        utf8_sequences(lo, lo | m, out);
        utf8_sequences((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        utf8_sequences(lo, (hi & ~m) - 1, out);
        utf8_sequences(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::string a = utf8_encode(lo), b = utf8_encode(hi);
  std::vector<ByteRange> seq;
  for (size_t i = 0; i < a.size(); ++i) seq.push_back({static_cast<uint8_t>(a[i]), static_cast<uint8_t>(b[i])});
  out.push_back(std::move(seq));
}

// How JSON writes a code point that must be escaped; empty when it is
// written as itself.
std::string json_escape(uint32_t cp) {
  switch (cp) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
  }
  if (cp < 0x20) {
    static const char* hex = "0123456789abcdef";
    return std::string("\\u00") + hex[cp >> 4] + hex[cp & 15];
  }
  return {};
}

std::vector<CodepointRange> normalized(std::vector<CodepointRange> set) {
  std::sort(set.begin(), set.end(), [](auto a, auto b) { return a.lo < b.lo; });
  std::vector<CodepointRange> out;
  for (auto r : set) {
    if (!out.empty() && r.lo <= out.back().hi + 1) out.back().hi = std::max(out.back().hi, r.hi);
    else out.push_back(r);
  }
  return out;
}

std::vector<CodepointRange> complement(const std::vector<CodepointRange>& set) {
  std::vector<CodepointRange> out;
  uint32_t next = 0;
  for (auto r : normalized(set)) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= kMaxCodepoint) out.push_back({next, kMaxCodepoint});
  return out;
}

}  // namespace

Regex json_chars(const std::vector<CodepointRange>& set) {
  std::vector<Regex> choices;
  for (auto r : normalized(set)) {
    uint32_t lo = r.lo;
    // Characters JSON escapes, one escape each.
    for (; lo <= r.hi && lo < 0x20; ++lo) {
      auto e = json_escape(lo);
      auto seq = regex_literal(e);
      choices.push_back(regex_bytes(seq->bytes, true));
    }
    if (lo > r.hi) continue;
    std::vector<std::pair<uint32_t, uint32_t>> plain;
    for (uint32_t q : {uint32_t('"'), uint32_t('\\')}) {
      if (q >= lo && q <= r.hi) {
        if (q > lo) plain.push_back({lo, q - 1});
        choices.push_back(regex_bytes(regex_literal(json_escape(q))->bytes, true));
        lo = q + 1;
      }
    }
    if (lo <= r.hi) plain.push_back({lo, r.hi});
    for (auto [a, b] : plain) {
      std::vector<std::vector<ByteRange>> seqs;
      utf8_sequences(a, b, seqs);
      for (auto& s : seqs) choices.push_back(regex_bytes(std::move(s), true));
    }
  }
  return regex_alt(std::move(choices));
}

Regex any_json_string_char() {
  std::vector<Regex> choices;
  // Raw: printable ASCII but `"` and `\`, then every well-formed multi-byte character.
  choices.push_back(json_chars({{0x20, 0x21}, {0x23, 0x5B}, {0x5D, kMaxCodepoint}}));
  // Escapes: the short ones, and \uXXXX outside the surrogates.
  choices.push_back(regex_bytes({{'\\', '\\'}, {'"', '"'}}, true));
  choices.push_back(regex_bytes({{'\\', '\\'}, {'\\', '\\'}}, true));
  choices.push_back(regex_bytes({{'\\', '\\'}, {'/', '/'}}, true));
  for (char c : std::string_view("bfnrt")) choices.push_back(regex_bytes({{'\\', '\\'}, {uint8_t(c), uint8_t(c)}}, true));
  const Regex hex = regex_alt({regex_bytes({{'0', '9'}}, false), regex_bytes({{'a', 'f'}}, false),
                               regex_bytes({{'A', 'F'}}, false)});
  const Regex not_d = regex_alt({regex_bytes({{'0', '9'}}, false), regex_bytes({{'a', 'c'}}, false),
                                 regex_bytes({{'A', 'C'}}, false), regex_bytes({{'e', 'f'}}, false),
                                 regex_bytes({{'E', 'F'}}, false)});
  const Regex d_low = regex_concat({regex_alt({regex_literal("d"), regex_literal("D")}), regex_bytes({{'0', '7'}}, false)});
  choices.push_back(regex_concat({regex_bytes({{'\\', '\\'}, {'u', 'u'}}, true),
                                  regex_alt({regex_concat({not_d, hex}), d_low}), hex, hex}));
  return regex_alt(std::move(choices));
}

namespace {

// Recursive descent over the documented subset.
class PatternParser {
 public:
  PatternParser(std::string_view p, const std::string& where) : p_(p), where_(where) {}

  Regex parse() {
    if (!p_.empty() && p_[0] == '^') ++i_;
    Regex r = alternation();
    if (i_ < p_.size()) fail("unexpected '" + std::string(1, p_[i_]) + "'");
    return r;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("json schema: pattern at " + where_ + " is outside the supported subset: " + what +
                " (at offset " + std::to_string(i_) + ")");
  }
  bool at_end() const { return i_ >= p_.size(); }
  char peek() const { return p_[i_]; }

  Regex alternation() {
    std::vector<Regex> choices{sequence()};
    while (!at_end() && peek() == '|') {
      ++i_;
      choices.push_back(sequence());
    }
    return regex_alt(std::move(choices));
  }

  Regex sequence() {
    std::vector<Regex> parts;
    while (!at_end() && peek() != '|' && peek() != ')') {
      if (peek() == '$') {  // implied anyway: accepted at the very end only
        ++i_;
        if (!at_end()) fail("'$' before the end");
        continue;
      }
      if (peek() == '^') fail("'^' after the start");
      parts.push_back(quantified(atom()));
    }
    if (parts.empty()) return regex_concat({regex_literal("")});
    return regex_concat(std::move(parts));
  }

  uint32_t number() {
    if (at_end() || !isdigit(static_cast<unsigned char>(peek()))) fail("a number expected in {m,n}");
    uint64_t v = 0;
    while (!at_end() && isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + static_cast<uint64_t>(peek() - '0');
      if (v > 100000) fail("repeat count too large");
      ++i_;
    }
    return static_cast<uint32_t>(v);
  }

  // One quantifier per atom, with an optional lazy '?': "a++" and "a*{2}"
  // are syntax errors in ECMA-262, the dialect JSON Schema names (and each
  // stacked "+" would double the automaton).
  Regex quantified(Regex r) {
    bool quantified_once = false;
    while (!at_end()) {
      const char c = peek();
      if (quantified_once && (c == '?' || c == '*' || c == '+' || c == '{'))
        fail(std::string("nothing to repeat before '") + c + "' (a quantifier after a quantifier)");
      if (c == '?') {
        ++i_;
        r = regex_repeat(r, 0, 1);
      } else if (c == '*') {
        ++i_;
        r = regex_star(r);
      } else if (c == '+') {
        ++i_;
        r = regex_concat({r, regex_star(r)});
      } else if (c == '{') {
        ++i_;
        const uint32_t m = number();
        uint32_t n = m;
        bool open = false;
        if (!at_end() && peek() == ',') {
          ++i_;
          if (!at_end() && peek() == '}') open = true;
          else n = number();
        }
        if (at_end() || peek() != '}') fail("'}' expected");
        ++i_;
        if (n < m) fail("{m,n} with n < m");
        // No string is longer than the hard cap: counts past it add nothing.
        constexpr uint32_t kCap = 1024;
        if (m > kCap) fail("repeat count above " + std::to_string(kCap));
        if (open) r = regex_concat({regex_repeat(r, m, m), regex_star(r)});
        else r = regex_repeat(r, m, std::min(n, kCap));
      } else {
        break;
      }
      quantified_once = true;
      if (!at_end() && peek() == '?') ++i_;  // lazy: the same language
    }
    return r;
  }

  // One code point of the pattern (UTF-8 decoded).
  uint32_t codepoint() {
    const auto b = static_cast<unsigned char>(p_[i_++]);
    if (b < 0x80) return b;
    int extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : 1;
    uint32_t cp = b & (0x3F >> extra);
    for (int k = 0; k < extra; ++k) {
      if (at_end()) fail("truncated UTF-8");
      cp = (cp << 6) | (static_cast<unsigned char>(p_[i_++]) & 0x3F);
    }
    return cp;
  }

  static std::vector<CodepointRange> digits() { return {{'0', '9'}}; }
  static std::vector<CodepointRange> word() { return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
  static std::vector<CodepointRange> space() { return {{'\t', '\r'}, {' ', ' '}}; }

  // After a backslash: a class escape (\d \w \s and negations) or one character.
  std::vector<CodepointRange> escape(bool in_class) {
    if (at_end()) fail("trailing backslash");
    const char c = p_[i_++];
    switch (c) {
      case 'd': return digits();
      case 'D': return complement(digits());
      case 'w': return word();
      case 'W': return complement(word());
      case 's': return space();
      case 'S': return complement(space());
      case 'n': return {{'\n', '\n'}};
      case 't': return {{'\t', '\t'}};
      case 'r': return {{'\r', '\r'}};
      case 'f': return {{'\f', '\f'}};
      case 'v': return {{'\v', '\v'}};
      case 'u': {
        if (i_ + 4 > p_.size()) fail("\\u needs four hex digits");
        for (size_t k = i_; k < i_ + 4; ++k)
          if (!std::isxdigit(static_cast<unsigned char>(p_[k]))) fail("\\u needs four hex digits");
        const uint32_t cp = static_cast<uint32_t>(std::stoul(std::string(p_.substr(i_, 4)), nullptr, 16));
        i_ += 4;
        return {{cp, cp}};
      }
      case 'b':
        if (in_class) return {{'\b', '\b'}};
        fail("\\b (word boundary)");
      default: break;
    }
    if (isalnum(static_cast<unsigned char>(c))) fail(std::string("\\") + c);
    --i_;
    const uint32_t cp = codepoint();
    return {{cp, cp}};
  }

  std::vector<CodepointRange> char_class() {
    bool negate = false;
    if (!at_end() && peek() == '^') {
      negate = true;
      ++i_;
    }
    std::vector<CodepointRange> set;
    bool first = true;
    while (true) {
      if (at_end()) fail("unterminated '['");
      if (peek() == ']' && !first) {
        ++i_;
        break;
      }
      first = false;
      std::vector<CodepointRange> item;
      if (peek() == '\\') {
        ++i_;
        item = escape(true);
      } else {
        if (peek() == '[') fail("nested '['");
        const uint32_t cp = codepoint();
        item = {{cp, cp}};
      }
      if (item.size() == 1 && item[0].lo == item[0].hi && i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        uint32_t hi;
        if (peek() == '\\') {
          ++i_;
          auto e = escape(true);
          if (e.size() != 1 || e[0].lo != e[0].hi) fail("a class escape as a range's end");
          hi = e[0].lo;
        } else {
          hi = codepoint();
        }
        if (hi < item[0].lo) fail("a range out of order");
        item[0].hi = hi;
      }
      set.insert(set.end(), item.begin(), item.end());
    }
    return negate ? complement(set) : set;
  }

  Regex atom() {
    const char c = peek();
    if (c == '(') {
      ++i_;
      if (!at_end() && peek() == '?') {
        if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') i_ += 2;
        else fail("lookaround or named group");
      }
      ++depth_;
      Regex r = alternation();
      --depth_;
      if (at_end() || peek() != ')') fail("')' expected");
      ++i_;
      return r;
    }
    if (c == '[') {
      ++i_;
      return json_chars(char_class());
    }
    if (c == '.') {
      ++i_;
      return json_chars(complement({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}));
    }
    if (c == '\\') {
      ++i_;
      if (!at_end() && isdigit(static_cast<unsigned char>(peek())) && peek() != '0') fail("backreference");
      return json_chars(escape(false));
    }
    if (c == '*' || c == '+' || c == '?' || c == '{') fail(std::string("nothing to repeat before '") + c + "'");
    if (c == ')') fail("unbalanced ')'");
    const uint32_t cp = codepoint();
    return json_chars({{cp, cp}});
  }

  std::string_view p_;
  const std::string& where_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

Regex parse_pattern(std::string_view pattern, const std::string& where) {
  return PatternParser(pattern, where).parse();
}

}  // namespace kvgate::grammar
