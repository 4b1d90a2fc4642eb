// Jinja2's tests (`x is defined`, `x is string`, `x is divisibleby 3`),
// with Python's notion of each type: bool is a number but not an integer
// test's integer; an Undefined is iterable (and empty). An unknown test is
// Jinja2's "No test named 'x'.".
#pragma once

#include <string_view>

#include "gateway/template/value.h"

namespace kvgate::jinja {

bool apply_test(Renderer& r, std::string_view name, const Value& v, CallArgs& args);

}  // namespace kvgate::jinja
