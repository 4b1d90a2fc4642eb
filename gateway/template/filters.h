// Jinja2's built-in filters that chat templates use, with Jinja2's
// arguments and results, and Hugging Face's tojson (json.dumps keeping
// non-ASCII, indent/separators/sort_keys as given). An unknown filter is
// Jinja2's "No filter named 'x'.".
#pragma once

#include <string_view>

#include "gateway/template/value.h"

namespace kvgate::jinja {

Value apply_filter(Renderer& r, std::string_view name, const Value& input, CallArgs& args);

}  // namespace kvgate::jinja
