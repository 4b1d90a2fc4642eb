#include "gateway/template/py_string.h"

#include <algorithm>

#include "gateway/template/template_error.h"

namespace kvgate::jinja {
namespace {

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

bool is_py_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

namespace {

// Python's str.isspace() beyond ASCII, as UTF-8: U+0085, U+00A0, U+1680,
// U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_wide_space(std::string_view cp) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(cp[i]); };
  if (cp.size() == 2) return b(0) == 0xC2 && (b(1) == 0x85 || b(1) == 0xA0);
  if (cp.size() != 3) return false;
  if (b(0) == 0xE1) return b(1) == 0x9A && b(2) == 0x80;
  if (b(0) == 0xE3) return b(1) == 0x80 && b(2) == 0x80;
  if (b(0) != 0xE2) return false;
  if (b(1) == 0x80) return b(2) <= 0x8A || b(2) == 0xA8 || b(2) == 0xA9 || b(2) == 0xAF;
  return b(1) == 0x81 && b(2) == 0x9F;
}

// The byte length of the whitespace code point starting at s[i] (0: none).
std::size_t space_at(std::string_view s, std::size_t i) {
  if (is_py_space(s[i])) return 1;
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC0 && c < 0xE0 ? 2 : 0;
  return n != 0 && i + n <= s.size() && is_wide_space(s.substr(i, n)) ? n : 0;
}

// The byte length of the whitespace code point ending at s[e - 1] (0: none).
std::size_t space_before(std::string_view s, std::size_t e) {
  if (is_py_space(s[e - 1])) return 1;
  for (std::size_t n = 2; n <= 3 && n <= e; ++n)
    if (is_wide_space(s.substr(e - n, n))) return n;
  return 0;
}

}  // namespace

std::vector<std::size_t> code_point_offsets(std::string_view s) {
  std::vector<std::size_t> offsets;
  offsets.reserve(s.size() + 1);
  for (std::size_t i = 0; i < s.size(); ++i)
    if (!is_continuation(s[i])) offsets.push_back(i);
  offsets.push_back(s.size());
  return offsets;
}

std::size_t code_point_count(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return !is_continuation(c); }));
}

std::vector<std::size_t> slice_positions(std::size_t length, std::optional<int64_t> start, std::optional<int64_t> stop,
                                         std::optional<int64_t> step) {
  const int64_t n = static_cast<int64_t>(length);
  const int64_t st = step.value_or(1);
  if (st == 0) fail("slice step cannot be zero");
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v;
    if (i < 0) {
      i += n;
      if (i < 0) i = st < 0 ? -1 : 0;
    } else if (i >= n) {
      i = st < 0 ? n - 1 : n;
    }
    return i;
  };
  const int64_t b = adjust(start, st < 0 ? n - 1 : 0);
  const int64_t e = adjust(stop, st < 0 ? -1 : n);
  std::vector<std::size_t> out;
  for (int64_t i = b; st > 0 ? i < e : i > e;) {
    out.push_back(static_cast<std::size_t>(i));
    if (__builtin_add_overflow(i, st, &i)) break;
  }
  return out;
}

std::string str_slice(std::string_view s, std::optional<int64_t> start, std::optional<int64_t> stop,
                      std::optional<int64_t> step) {
  std::string out;
  if (is_ascii(s)) {
    for (std::size_t i : slice_positions(s.size(), start, stop, step)) out += s[i];
    return out;
  }
  const auto offsets = code_point_offsets(s);
  for (std::size_t i : slice_positions(offsets.size() - 1, start, stop, step))
    out.append(s.substr(offsets[i], offsets[i + 1] - offsets[i]));
  return out;
}

std::string str_strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  if (!chars) {
    std::size_t b = 0, e = s.size();
    if (left)
      for (std::size_t n; b < e && (n = space_at(s, b)) != 0;) b += n;
    if (right)
      for (std::size_t n; e > b && (n = space_before(s, e)) != 0;) e -= n;
    return std::string(s.substr(b, e - b));
  }
  // Strip whole code points that occur in `chars`.
  const auto set_offsets = code_point_offsets(*chars);
  std::vector<std::string_view> set;
  for (std::size_t i = 0; i + 1 < set_offsets.size(); ++i)
    set.push_back(std::string_view(*chars).substr(set_offsets[i], set_offsets[i + 1] - set_offsets[i]));
  const auto offsets = code_point_offsets(s);
  auto in_set = [&](std::size_t i) {
    const std::string_view cp = s.substr(offsets[i], offsets[i + 1] - offsets[i]);
    return std::find(set.begin(), set.end(), cp) != set.end();
  };
  std::size_t b = 0, e = offsets.size() - 1;
  if (left)
    while (b < e && in_set(b)) ++b;
  if (right)
    while (e > b && in_set(e - 1)) --e;
  return std::string(s.substr(offsets[b], offsets[e] - offsets[b]));
}

std::vector<std::string> str_split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit,
                                   bool from_right) {
  std::vector<std::string> parts;
  if (sep && sep->empty()) fail("empty separator");
  if (!sep) {
    // Runs of whitespace; no empty parts.
    std::vector<std::pair<std::size_t, std::size_t>> words;
    std::size_t i = 0;
    while (i < s.size()) {
      for (std::size_t n; i < s.size() && (n = space_at(s, i)) != 0;) i += n;
      if (i == s.size()) break;
      std::size_t j = i;
      while (j < s.size() && space_at(s, j) == 0) ++j;
      words.emplace_back(i, j);
      i = j;
    }
    if (maxsplit < 0 || static_cast<std::size_t>(maxsplit) + 1 >= words.size()) {
      for (auto [b, e] : words) parts.emplace_back(s.substr(b, e - b));
      return parts;
    }
    const std::size_t keep = static_cast<std::size_t>(maxsplit);
    if (!from_right) {
      for (std::size_t k = 0; k < keep; ++k)
        parts.emplace_back(s.substr(words[k].first, words[k].second - words[k].first));
      parts.emplace_back(s.substr(words[keep].first));  // the rest keeps its trailing whitespace, as in Python
    } else {
      const std::size_t first = words.size() - keep;
      parts.emplace_back(s.substr(0, words[first - 1].second));
      for (std::size_t k = first; k < words.size(); ++k)
        parts.emplace_back(s.substr(words[k].first, words[k].second - words[k].first));
    }
    return parts;
  }
  std::vector<std::size_t> hits;
  for (std::size_t p = s.find(*sep); p != std::string_view::npos; p = s.find(*sep, p + sep->size())) hits.push_back(p);
  if (maxsplit >= 0 && hits.size() > static_cast<std::size_t>(maxsplit)) {
    if (from_right) {
      // rsplit counts from the right; for non-overlapping separators the
      // rightmost hits of a left-to-right scan are the same ones.
      hits.erase(hits.begin(), hits.end() - maxsplit);
    } else {
      hits.resize(static_cast<std::size_t>(maxsplit));
    }
  }
  std::size_t b = 0;
  for (std::size_t p : hits) {
    parts.emplace_back(s.substr(b, p - b));
    b = p + sep->size();
  }
  parts.emplace_back(s.substr(b));
  return parts;
}

std::string str_replace(std::string_view s, std::string_view old, std::string_view replacement, int64_t count) {
  std::string out;
  int64_t done = 0;
  if (old.empty()) {
    const auto offsets = code_point_offsets(s);
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
      if (count < 0 || done < count) {
        out += replacement;
        ++done;
      }
      out.append(s.substr(offsets[i], offsets[i + 1] - offsets[i]));
    }
    if (count < 0 || done < count) out += replacement;
    return out;
  }
  std::size_t b = 0;
  for (std::size_t p = s.find(old); p != std::string_view::npos && (count < 0 || done < count); p = s.find(old, b)) {
    out.append(s.substr(b, p - b));
    out += replacement;
    b = p + old.size();
    ++done;
  }
  out.append(s.substr(b));
  return out;
}

std::string str_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

std::string str_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

namespace {
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
}  // namespace

std::string str_title(std::string_view s) {
  std::string out(s);
  bool prev_cased = false;
  for (char& c : out) {
    if (is_alpha(c)) {
      c = prev_cased ? str_lower(std::string(1, c))[0] : str_upper(std::string(1, c))[0];
      prev_cased = true;
    } else {
      prev_cased = static_cast<unsigned char>(c) >= 0x80 && prev_cased;
    }
  }
  return out;
}

std::string str_capitalize(std::string_view s) {
  std::string out = str_lower(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

std::vector<std::string> str_splitlines(std::string_view s) {
  std::vector<std::string> lines;
  std::size_t b = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= '\x1c' && c <= '\x1e')) {
      lines.emplace_back(s.substr(b, i - b));
      if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      b = i + 1;
    }
  }
  if (b < s.size()) lines.emplace_back(s.substr(b));
  return lines;
}

}  // namespace kvgate::jinja
