#include "gateway/template/predicates.h"

#include "gateway/template/call_args.h"
#include "gateway/template/methods.h"
#include "gateway/template/py_string.h"
#include "gateway/template/renderer.h"
#include "gateway/template/template_error.h"

namespace kvgate::jinja {
namespace {

const Value& arg(const CallArgs& args, std::string_view test) {
  if (args.positional.empty()) fail(std::string(test) + "() missing 1 required positional argument");
  return args.positional[0];
}

bool contains_value(const Value& container, const Value& item) {
  if (container.is_string())
    return item.is_string() && container.as_string().find(item.as_string()) != std::string::npos;
  if (container.is_dict()) return item.is_string() && container.as_dict().find(item.as_string());
  for (const Value& v : iterate(container))
    if (equal(v, item)) return true;
  return false;
}

}  // namespace

bool apply_test(Renderer&, std::string_view name, const Value& v, CallArgs& args) {
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_mapping();
  // Anything Python can iterate; Jinja2's Undefined included.
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_list() || v.is_mapping();
  // Has a length and items: str, list, tuple, dict (not a generator).
  if (name == "sequence")
    return v.is_undefined() || v.is_string() || (v.is_list() && !v.as_list().generator) || v.is_mapping();
  if (name == "callable") return v.is_callable();
  if (name == "lower") return v.is_string() && str_lower(v.as_string()) == v.as_string();
  if (name == "upper") return v.is_string() && str_upper(v.as_string()) == v.as_string();
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!v.is_int() && !v.is_bool())
      fail("the '" + std::string(name) + "' test needs an integer, not " + std::string(v.type_name()));
    const int64_t x = v.is_int() ? v.as_int() : v.as_bool();
    if (name == "odd") return x % 2 != 0;
    if (name == "even") return x % 2 == 0;
    const Value& d = arg(args, name);
    if (!d.is_int() || d.as_int() == 0) fail("divisibleby needs a non-zero integer");
    return x % d.as_int() == 0;
  }
  if (name == "eq" || name == "equalto" || name == "==") return equal(v, arg(args, name));
  if (name == "ne" || name == "!=") return !equal(v, arg(args, name));
  if (name == "lt" || name == "lessthan" || name == "<") return less(v, arg(args, name));
  if (name == "gt" || name == "greaterthan" || name == ">") return less(arg(args, name), v);
  if (name == "le" || name == "<=") return !less(arg(args, name), v);
  if (name == "ge" || name == ">=") return !less(v, arg(args, name));
  if (name == "in") return contains_value(arg(args, name), v);
  if (name == "sameas") {
    const Value& w = arg(args, name);
    if (v.kind() != w.kind()) return false;
    if (v.is_none() || v.is_bool()) return equal(v, w);
    if (v.is_list()) return v.list_ptr() == w.list_ptr();
    if (v.is_dict()) return v.dict_ptr() == w.dict_ptr();
    return false;
  }
  if (name == "escaped") return false;
  fail("No test named '" + std::string(name) + "'.");
}

}  // namespace kvgate::jinja
