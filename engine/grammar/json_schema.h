// JSON schema → Grammar: the grammar of exactly the compact JSON texts (no
// whitespace outside strings) that validate against the schema, within the
// caps below. What is supported, and how each cap is enforced, is listed in
// docs/grammar.md; any other keyword is refused with a kvgate::Error that
// names it and its JSON path ("#/properties/a"), never ignored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include <boost/json/value.hpp>

#include "engine/grammar/grammar.h"

namespace kvgate::grammar {

// The bounds that make every constrained output close, where the schema
// leaves one open. An explicit bound of the schema is kept if it is lower,
// and clamped to the hard cap (kMaxCountedChars, kMaxItemsHard) if higher:
// what is generated then still validates.
struct SchemaCaps {
  uint32_t max_string_chars = 256;  // a string without maxLength
  uint32_t max_items = 64;          // an array without maxItems; a free-form object's members
  uint32_t max_nesting = 16;        // objects and arrays inside each other
  uint32_t max_ref_depth = 8;       // $ref expansions along one path (bounds recursion)
  uint32_t max_number_digits = 15;  // significant digits of a number (integer and fraction parts)
  size_t max_schema_bytes = 1 << 20;
};

inline constexpr uint32_t kMaxItemsHard = 1024;

// Throws kvgate::Error for a schema it cannot compile exactly.
std::shared_ptr<const Grammar> compile_json_schema(const boost::json::value& schema, const SchemaCaps& caps = {});
// The same from the schema's text (refused over caps.max_schema_bytes before it is parsed).
std::shared_ptr<const Grammar> compile_json_schema(std::string_view schema_text, const SchemaCaps& caps = {});
// response_format {"type": "json_object"}: any JSON object, under the same caps.
std::shared_ptr<const Grammar> compile_any_json_object(const SchemaCaps& caps = {});

}  // namespace kvgate::grammar
