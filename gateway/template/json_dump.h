// Values as JSON text exactly as Python's json.dumps writes them, which is
// what Hugging Face's `tojson` filter calls: ", " and ": " between items
// (",", ": " once indenting), floats as repr, non-ASCII kept unless
// ensure_ascii, keys in insertion order unless sort_keys. A value JSON
// cannot hold (an Undefined, a generator, a macro) is Python's TypeError
// "Object of type generator is not JSON serializable".
#pragma once

#include <optional>
#include <string>

#include "gateway/template/value.h"

namespace kvgate::jinja {

struct JsonStyle {
  bool ensure_ascii = false;
  std::optional<std::string> indent;          // one level's indent; absent: one line
  std::optional<std::string> item_separator;  // default ", " (or "," when indenting)
  std::optional<std::string> key_separator;   // default ": "
  bool sort_keys = false;
};

// `max_bytes` bounds the text; past it the renderer's limit error is thrown.
std::string to_json(const Value& v, const JsonStyle& style, std::size_t max_bytes);

}  // namespace kvgate::jinja
