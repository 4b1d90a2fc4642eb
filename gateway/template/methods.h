// Methods a template may call on values, as Python's str, dict and list
// have them (`s.strip()`, `d.get('k', x)`, `d.items()`), behind the
// immutable sandbox: a method that would change a list or dict (append,
// pop, update, ...) is an Undefined that refuses with Jinja2's "access to
// attribute 'append' of 'list' object is unsafe." when called.
#pragma once

#include <optional>
#include <string>

#include "gateway/template/value.h"

namespace kvgate::jinja {

// The bound method `obj.name`, an unsafe-refusal Undefined, or nullopt
// when `obj` has no such method.
std::optional<Value> method_of(const Value& obj, const std::string& name);

// Throws the renderer's size limit if s.replace(old, new) would be too long.
void check_replace_size(Renderer& r, std::string_view s, std::string_view old, std::string_view replacement);

// Python's iter(v) materialised: a list's items, a dict's keys, a
// string's characters, an Undefined's nothing; else "'int' object is not iterable".
std::vector<Value> iterate(const Value& v);

}  // namespace kvgate::jinja
