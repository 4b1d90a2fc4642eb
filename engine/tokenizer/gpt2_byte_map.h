// GPT-2's reversible byte <-> printable-character map for byte-level BPE.
//
// Byte-level BPE vocabularies store every token as text in which each raw
// byte is replaced by one printable Unicode character: bytes that are already
// printable (! .. ~, ¡ .. ¬, ® .. ÿ) stand for themselves, the other 68 (space,
// controls, 0x7F..0xA0, 0xAD) are moved to U+0100 and up in byte order. So
// 'Ġ' (U+0120) is the space byte and 'Ċ' (U+010A) is '\n'.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvgate {

// The UTF-8 text of the character that stands for byte b.
std::string_view gpt2_byte_to_text(uint8_t b);

// The byte a character stands for, if it is one of the 256.
std::optional<uint8_t> gpt2_char_to_byte(char32_t cp);

}  // namespace kvgate
