#include "engine/tokenizer/gpt2_ascii_match.h"

#include <array>
#include <cstdint>

namespace kvgate {
namespace {

// ASCII classes as PCRE2 sees them with UCP: \p{L} = A-Za-z, \p{N} = 0-9,
// \s = \t \n \v \f \r and space; everything else below 0x80 is "other".
enum Class : uint8_t { kLetter, kDigit, kSpace, kOther, kNonAscii };

constexpr std::array<uint8_t, 256> make_classes() {
  std::array<uint8_t, 256> c{};
  for (int b = 0; b < 256; ++b) {
    c[b] = b >= 0x80                                       ? kNonAscii
           : (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') ? kLetter
           : b >= '0' && b <= '9'                           ? kDigit
           : (b >= 0x09 && b <= 0x0D) || b == ' '           ? kSpace
                                                            : kOther;
  }
  return c;
}
constexpr std::array<uint8_t, 256> kClass = make_classes();

uint8_t cls(std::string_view s, size_t i) { return kClass[static_cast<unsigned char>(s[i])]; }

// End of the run of class `k` starting at i, or npos if a non-ASCII byte
// stops it (that byte might continue the run).
size_t run_end(std::string_view s, size_t i, uint8_t k) {
  while (i < s.size() && cls(s, i) == k) ++i;
  return i < s.size() && cls(s, i) == kNonAscii ? std::string_view::npos : i;
}

// \s+(?!\S) at pos: the whole whitespace run if it reaches the end, else the
// run minus its last character (which must precede the non-space), if any.
AsciiMatch spaces(std::string_view s, size_t pos, size_t* end) {
  const size_t r = run_end(s, pos, kSpace);
  if (r == std::string_view::npos) return AsciiMatch::Unknown;
  if (r == s.size()) {
    *end = r;
    return AsciiMatch::Match;
  }
  if (r - pos >= 2) {
    *end = r - 1;
    return AsciiMatch::Match;
  }
  return AsciiMatch::NoMatch;
}

AsciiMatch run_of(std::string_view s, size_t from, uint8_t k, size_t* end) {
  const size_t r = run_end(s, from, k);
  if (r == std::string_view::npos) return AsciiMatch::Unknown;
  *end = r;
  return AsciiMatch::Match;
}

}  // namespace

AsciiMatch gpt2_ascii_match(std::string_view s, size_t pos, size_t* begin, size_t* end) {
  *begin = pos;
  const char c = s[pos];
  const uint8_t k = cls(s, pos);
  if (k == kNonAscii) return AsciiMatch::Unknown;

  if (c == '\'' && pos + 1 < s.size()) {  // the contractions come first
    const char d = s[pos + 1];
    if (d == 's' || d == 't' || d == 'm' || d == 'd') {
      *end = pos + 2;
      return AsciiMatch::Match;
    }
    if (pos + 2 < s.size()) {
      const char e = s[pos + 2];
      if ((d == 'r' && e == 'e') || (d == 'v' && e == 'e') || (d == 'l' && e == 'l')) {
        *end = pos + 3;
        return AsciiMatch::Match;
      }
    }
  }

  if (c == ' ') {  // " ?" then a run of the next character's class
    if (pos + 1 == s.size()) {
      *end = pos + 1;
      return AsciiMatch::Match;
    }
    const uint8_t next = cls(s, pos + 1);
    if (next == kNonAscii) return AsciiMatch::Unknown;
    if (next != kSpace) return run_of(s, pos + 1, next, end);
    return spaces(s, pos, end);
  }
  if (k == kSpace) return spaces(s, pos, end);
  return run_of(s, pos, k, end);  // letters, digits or other (incl. a lone ')
}

}  // namespace kvgate
