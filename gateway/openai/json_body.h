// A request body as a JSON object, or the 400 that says why it is not one.
//
// RFC 8259 JSON is UTF-8. Boost.JSON 1.81 does refuse ill-formed UTF-8 and
// lone surrogate escapes, but it calls both a bare "syntax error", so the
// body is checked here first (RFC 3629: no overlongs, no surrogates, nothing
// above U+10FFFF) and the error names the byte; after parsing, every string
// and key is checked again, so no later Boost change can let one through
// unseen. Nesting deeper than kMaxJsonDepth is refused by the parser.
//
// Pure; any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include <boost/json/object.hpp>

namespace kvgate::openai {

inline constexpr std::size_t kMaxJsonDepth = 64;

// Throws ApiError 400: invalid UTF-8 (code invalid_utf8, naming the byte
// offset), malformed JSON (code invalid_json, naming line, column and byte
// offset), or a value that is not an object (code invalid_json).
boost::json::object parse_json_object(std::string_view body);

// The offset of the first byte that does not begin a well-formed UTF-8
// character, or nullopt when all of `s` is well-formed.
std::optional<std::size_t> first_invalid_utf8(std::string_view s);

}  // namespace kvgate::openai
