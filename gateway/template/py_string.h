// Python's str operations over UTF-8 text: Python counts, indexes and
// slices code points, not bytes, and templates rely on it (`content[:50]`,
// `name | length`). ASCII text takes the byte path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::jinja {

// Byte offsets of each code point's start, plus the end: size() - 1 code points.
std::vector<std::size_t> code_point_offsets(std::string_view s);
std::size_t code_point_count(std::string_view s);

// Python's slice indices (start, stop, step) for a sequence of `length`,
// absent ones as nullopt; the positions it selects, in order.
std::vector<std::size_t> slice_positions(std::size_t length, std::optional<int64_t> start, std::optional<int64_t> stop,
                                         std::optional<int64_t> step);

std::string str_slice(std::string_view s, std::optional<int64_t> start, std::optional<int64_t> stop,
                      std::optional<int64_t> step);

// str.strip/lstrip/rstrip: whitespace when `chars` is absent, else any of
// its code points.
std::string str_strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit) and str.rsplit: whitespace runs when sep is absent.
std::vector<std::string> str_split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit,
                                   bool from_right);
std::string str_replace(std::string_view s, std::string_view old, std::string_view replacement, int64_t count);
std::string str_upper(std::string_view s);
std::string str_lower(std::string_view s);
std::string str_title(std::string_view s);
std::string str_capitalize(std::string_view s);
// str.splitlines(): the lines, without their ends.
std::vector<std::string> str_splitlines(std::string_view s);
bool is_py_space(char c);

}  // namespace kvgate::jinja
