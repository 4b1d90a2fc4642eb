#include "engine/tokenizer/utf8.h"

namespace kvgate {
namespace {

// For a lead byte: the number of continuation bytes it needs and the allowed
// range of the FIRST continuation byte (the later ones are always 80..BF).
// The narrowed first ranges are what rule out overlongs (E0, F0), surrogates
// (ED) and code points above U+10FFFF (F4). A byte with need < 0 is never a
// valid lead.
struct LeadInfo {
  int need;
  unsigned char lo, hi;
};

LeadInfo lead_info(unsigned char b) {
  if (b < 0x80) return {0, 0, 0};
  if (b < 0xC2) return {-1, 0, 0};  // continuation byte or overlong 2-byte lead
  if (b < 0xE0) return {1, 0x80, 0xBF};
  if (b == 0xE0) return {2, 0xA0, 0xBF};
  if (b == 0xED) return {2, 0x80, 0x9F};
  if (b < 0xF0) return {2, 0x80, 0xBF};
  if (b == 0xF0) return {3, 0x90, 0xBF};
  if (b < 0xF4) return {3, 0x80, 0xBF};
  if (b == 0xF4) return {3, 0x80, 0x8F};
  return {-1, 0, 0};
}

enum class Scan { Complete, Invalid, Truncated };

// Examines the sequence at s[pos]; `len` gets the character's length
// (Complete), the length of the maximal ill-formed subpart (Invalid), or the
// number of bytes present (Truncated: a valid prefix cut off by the end).
Scan scan(std::string_view s, size_t pos, size_t* len) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  const LeadInfo li = lead_info(b0);
  if (li.need == 0) { *len = 1; return Scan::Complete; }
  if (li.need < 0) { *len = 1; return Scan::Invalid; }
  for (int k = 1; k <= li.need; ++k) {
    if (pos + k >= s.size()) { *len = static_cast<size_t>(k); return Scan::Truncated; }
    const auto b = static_cast<unsigned char>(s[pos + k]);
    const unsigned char lo = k == 1 ? li.lo : 0x80, hi = k == 1 ? li.hi : 0xBF;
    if (b < lo || b > hi) { *len = static_cast<size_t>(k); return Scan::Invalid; }
  }
  *len = static_cast<size_t>(li.need) + 1;
  return Scan::Complete;
}

}  // namespace

void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t utf8_decode(std::string_view s, size_t pos, char32_t* cp) {
  size_t len = 0;
  if (pos >= s.size() || scan(s, pos, &len) != Scan::Complete) return 0;
  const auto b0 = static_cast<unsigned char>(s[pos]);
  char32_t v = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (size_t k = 1; k < len; ++k) v = (v << 6) | (static_cast<unsigned char>(s[pos + k]) & 0x3F);
  *cp = v;
  return len;
}

size_t utf8_append_valid(std::string& out, std::string_view in, bool final) {
  size_t pos = 0, run = 0;  // [run, pos) is valid text not yet copied
  while (pos < in.size()) {
    // ASCII fast path: most prompt and output text is ASCII.
    if (static_cast<unsigned char>(in[pos]) < 0x80) { ++pos; continue; }
    size_t len = 0;
    switch (scan(in, pos, &len)) {
      case Scan::Complete:
        pos += len;
        break;
      case Scan::Invalid:
        out.append(in.substr(run, pos - run));
        out.append(kUtf8Replacement);
        pos += len;
        run = pos;
        break;
      case Scan::Truncated:
        out.append(in.substr(run, pos - run));
        if (!final) return pos;
        out.append(kUtf8Replacement);
        return in.size();
    }
  }
  out.append(in.substr(run, pos - run));
  return in.size();
}

std::string utf8_sanitize(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  utf8_append_valid(out, in, /*final=*/true);
  return out;
}

bool utf8_is_valid(std::string_view in) {
  size_t pos = 0;
  while (pos < in.size()) {
    size_t len = 0;
    if (scan(in, pos, &len) != Scan::Complete) return false;
    pos += len;
  }
  return true;
}

}  // namespace kvgate
