// The text mark: U+FDD0, a Unicode noncharacter ("reserved for internal
// use"), which kvgate's prompt encoder writes before a character of
// request text so that the character can never become part of a control
// token after the chat template has run (gateway/openai/prompt_encoder.h).
//
// The interpreter treats it as any other character, except that tojson
// never escapes it, even with ensure_ascii: "\ufdd0" in a template's JSON
// would drop the mark and leave the character it guards unguarded.
#pragma once

#include <string_view>

namespace kvgate::jinja {

inline constexpr std::string_view kTextMark = "\xEF\xB7\x90";  // U+FDD0 in UTF-8
inline constexpr char32_t kTextMarkCodePoint = 0xFDD0;

}  // namespace kvgate::jinja
