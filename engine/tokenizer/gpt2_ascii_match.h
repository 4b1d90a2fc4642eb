// A hand-written matcher for the GPT-2 pre-tokenizer pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
// that decides ASCII text without running the regex engine.
//
// Why: that pattern splits gpt-2, mpt, starcoder, falcon and more, and a
// PCRE2 call per word was about half of all encoding time. It must give
// exactly PCRE2's answer (the leftmost match from `pos`, the first
// alternative that matches there, greedy), so whenever the answer would
// depend on a non-ASCII byte (a Unicode letter, digit or space, or invalid
// UTF-8) it returns Unknown and the caller asks PCRE2. Tests and the fuzz
// target compare the two on arbitrary text.
#pragma once

#include <cstddef>
#include <string_view>

namespace kvgate {

enum class AsciiMatch {
  Match,    // [*begin, *end) is the match; *begin == pos
  NoMatch,  // no match starts at pos (a lone \t or \n before a non-space)
  Unknown,  // depends on non-ASCII bytes: ask the regex engine
};

AsciiMatch gpt2_ascii_match(std::string_view subject, size_t pos, size_t* begin, size_t* end);

}  // namespace kvgate
