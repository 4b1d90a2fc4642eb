// UTF-8 primitives the tokenizer and the streaming decoder share.
//
// Two notions of "a character" are needed and kept apart on purpose:
//  - utf8_lead_length: the lenient length llama.cpp's tokenizers assume from a
//    lead byte alone (continuation and invalid bytes count as 1). Symbol
//    splitting must use it to produce the same ids as the reference.
//  - utf8_append_valid / utf8_sanitize: strict well-formedness (RFC 3629: no
//    overlongs, no surrogates, nothing above U+10FFFF). Text we hand to clients
//    goes through these, so it is always valid UTF-8; every maximal ill-formed
//    subpart becomes one U+FFFD (the Unicode "best practice" substitution).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvgate {

inline constexpr std::string_view kUtf8Replacement = "\xEF\xBF\xBD";  // U+FFFD

// 1 for ASCII, continuation and invalid lead bytes; 2, 3 or 4 from the high
// nibble otherwise (0xF8..0xFF count as 4, as in llama.cpp).
inline size_t utf8_lead_length(unsigned char lead) {
  static constexpr uint8_t kByHighNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kByHighNibble[lead >> 4];
}

// Appends the code point's UTF-8 encoding (cp must be a Unicode scalar value).
void utf8_append(std::string& out, char32_t cp);

// Decodes the well-formed character starting at s[pos]. Returns its length
// and sets *cp, or returns 0 if s[pos..] does not start with a complete
// well-formed character.
size_t utf8_decode(std::string_view s, size_t pos, char32_t* cp);

// Appends `in` to `out` with every ill-formed subpart replaced by U+FFFD.
// If `final` is false, a trailing sequence that is a valid but incomplete
// prefix of a character is left unconsumed. Returns the bytes consumed, so
// a caller can keep the remainder until more bytes arrive.
size_t utf8_append_valid(std::string& out, std::string_view in, bool final);

std::string utf8_sanitize(std::string_view in);
bool utf8_is_valid(std::string_view in);

}  // namespace kvgate
