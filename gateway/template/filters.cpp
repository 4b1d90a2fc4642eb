#include "gateway/template/filters.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdlib>

#include "gateway/template/call_args.h"
#include "gateway/template/json_dump.h"
#include "gateway/template/methods.h"
#include "gateway/template/py_string.h"
#include "gateway/template/renderer.h"
#include "gateway/template/template_error.h"

namespace kvgate::jinja {
namespace {

Value generator(std::vector<Value> items) { return Value::list(std::move(items), true); }

// Jinja2's attribute paths ("function.name", "0"), each part looked up as `obj[part]`.
Value attribute_path(const Value& obj, const std::string& path) {
  Value v = obj;
  std::size_t b = 0;
  while (true) {
    const std::size_t e = path.find('.', b);
    const std::string part = path.substr(b, e == std::string::npos ? std::string::npos : e - b);
    const bool digits =
        !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    v = digits ? get_item(v, Value(static_cast<int64_t>(std::strtoll(part.c_str(), nullptr, 10))))
               : get_item(v, Value(part));
    if (e == std::string::npos) return v;
    b = e + 1;
  }
}

std::string attribute_name(const Value* v, std::string_view filter) {
  if (!v) return {};
  if (v->is_string()) return v->as_string();
  if (v->is_int()) return std::to_string(v->as_int());
  fail(std::string(filter) + ": attribute must be a string");
}

// Sort and unique compare strings case-insensitively unless told otherwise.
Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value(str_lower(v.as_string()));
  return v;
}

int64_t length_of(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return static_cast<int64_t>(code_point_count(v.as_string()));
    case Value::Kind::kList:
      if (!v.as_list().generator) return static_cast<int64_t>(v.as_list().items.size());
      break;
    case Value::Kind::kDict:
      if (!v.as_dict().is_namespace) return static_cast<int64_t>(v.as_dict().items.size());
      break;
    default: break;
  }
  fail("object of type '" + std::string(v.type_name()) + "' has no len()");
}

// Python's int(x) for the int filter: numbers truncate; text is read as an
// integer, else as a float; anything else is the default.
std::optional<int64_t> parse_int(const Value& v, int base) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  if (v.is_float()) {
    if (!std::isfinite(v.as_float()) || std::fabs(v.as_float()) >= 9.2e18) return std::nullopt;
    return static_cast<int64_t>(v.as_float());
  }
  if (!v.is_string()) return std::nullopt;
  std::string s = str_strip(v.as_string(), std::nullopt, true, true);
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, base);
  if (errno == 0 && end && *end == '\0') return i;
  const double d = std::strtod(s.c_str(), &end);
  if (end && *end == '\0' && std::isfinite(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
  return std::nullopt;
}

std::optional<double> parse_float(const Value& v) {
  if (v.is_number()) return v.to_double();
  if (!v.is_string()) return std::nullopt;
  const std::string s = str_strip(v.as_string(), std::nullopt, true, true);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end && *end == '\0') return d;
  return std::nullopt;
}

// Python's round(x, n): halves to even, on the decimal value.
double py_round(double x, int64_t digits) {
  if (!std::isfinite(x)) return x;
  const double scale = std::pow(10.0, static_cast<double>(digits));
  const int saved = std::fegetround();
  std::fesetround(FE_TONEAREST);
  const double r = std::nearbyint(x * scale) / scale;
  std::fesetround(saved);
  return r;
}

std::string indent_text(std::string s, const Value& width, bool first, bool blank) {
  const std::string pad =
      width.is_string()
          ? width.as_string()
          : std::string(static_cast<std::size_t>(std::max<int64_t>(0, width.is_int() ? width.as_int() : 4)), ' ');
  s += "\n";  // Jinja2's own trick, so that splitlines keeps a final empty line
  const std::vector<std::string> lines = str_splitlines(s);
  std::string out;
  if (blank) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) out += "\n" + pad;
      out += lines[i];
    }
  } else if (!lines.empty()) {
    out = lines[0];
    for (std::size_t i = 1; i < lines.size(); ++i) {
      out += "\n";
      if (!lines[i].empty()) out += pad;
      out += lines[i];
    }
  }
  if (first) out = pad + out;
  return out;
}

// select/reject/selectattr/rejectattr: keep items whose test (or truth) is `want`.
Value select_items(Renderer& r, const Value& input, CallArgs& args, bool by_attribute, bool want) {
  std::string attribute;
  std::size_t next = 0;
  if (by_attribute) {
    if (args.positional.empty()) fail("selectattr/rejectattr need an attribute");
    attribute = attribute_name(&args.positional[0], "selectattr");
    next = 1;
  }
  std::string test;
  if (next < args.positional.size()) {
    if (!args.positional[next].is_string()) fail("the test's name must be a string");
    test = args.positional[next].as_string();
    ++next;
  }
  CallArgs test_args;
  test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end());
  test_args.keyword = args.keyword;
  std::vector<Value> out;
  if (!truthy(input)) return generator({});  // Jinja2: `if value:` before iterating
  for (const Value& item : iterate(input)) {
    const Value v = by_attribute ? attribute_path(item, attribute) : item;
    CallArgs a = test_args;
    const bool ok = test.empty() ? truthy(v) : r.test(test, v, a);
    if (ok == want) out.push_back(item);
  }
  return generator(std::move(out));
}

Value map_items(Renderer& r, const Value& input, CallArgs& args) {
  std::vector<Value> out;
  if (!truthy(input)) return generator({});  // Jinja2: `if value:` before iterating
  const Value* attribute = nullptr;
  const Value* fallback = nullptr;
  for (const auto& [k, v] : args.keyword) {
    if (k == "attribute") attribute = &v;
    if (k == "default") fallback = &v;
  }
  if (attribute) {
    const std::string path = attribute_name(attribute, "map");
    for (const Value& item : iterate(input)) {
      Value v = attribute_path(item, path);
      if (v.is_undefined() && fallback) v = *fallback;
      out.push_back(std::move(v));
    }
    return generator(std::move(out));
  }
  if (args.positional.empty() || !args.positional[0].is_string()) fail("map() needs a filter name or attribute=");
  const std::string filter = args.positional[0].as_string();
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : iterate(input)) {
    CallArgs a = rest;
    out.push_back(r.filter(filter, item, a));
  }
  return generator(std::move(out));
}

Value sorted(const Value& input, bool reverse, bool case_sensitive, const std::string& attribute) {
  std::vector<Value> items = iterate(input);
  std::vector<std::pair<Value, std::size_t>> keyed;
  for (std::size_t i = 0; i < items.size(); ++i)
    keyed.emplace_back(sort_key(attribute.empty() ? items[i] : attribute_path(items[i], attribute), case_sensitive), i);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return reverse ? less(b.first, a.first) : less(a.first, b.first);
  });
  std::vector<Value> out;
  for (const auto& k : keyed) out.push_back(items[k.second]);
  return Value::list(std::move(out));
}

Value min_max(const Value& input, CallArgs& args, bool want_max) {
  BoundArgs a(want_max ? "max" : "min", args, {"case_sensitive", "attribute"});
  const bool cs = a.get(0) && truthy(*a.get(0));
  const std::string attribute = attribute_name(a.get(1), "min/max");
  const std::vector<Value> items = iterate(input);
  if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
  std::size_t best = 0;
  for (std::size_t i = 1; i < items.size(); ++i) {
    const Value x = sort_key(attribute.empty() ? items[i] : attribute_path(items[i], attribute), cs);
    const Value y = sort_key(attribute.empty() ? items[best] : attribute_path(items[best], attribute), cs);
    if (want_max ? less(y, x) : less(x, y)) best = i;
  }
  return items[best];
}

Value tojson(Renderer& r, const Value& input, CallArgs& args) {
  BoundArgs a("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonStyle style;
  style.ensure_ascii = a.get(0) && truthy(*a.get(0));
  if (const Value* indent = a.get(1); indent && !indent->is_none()) {
    if (indent->is_string()) {
      style.indent = indent->as_string();
    } else if (indent->is_int()) {
      style.indent = std::string(static_cast<std::size_t>(std::clamp<int64_t>(indent->as_int(), 0, 64)), ' ');
    } else {
      fail("tojson: indent must be an integer or a string");
    }
  }
  if (const Value* seps = a.get(2); seps && !seps->is_none()) {
    const std::vector<Value> parts = iterate(*seps);
    if (parts.size() != 2 || !parts[0].is_string() || !parts[1].is_string())
      fail("tojson: separators must be a pair of strings");
    style.item_separator = parts[0].as_string();
    style.key_separator = parts[1].as_string();
  }
  style.sort_keys = a.get(3) && truthy(*a.get(3));
  return Value(to_json(input, style, r.limits().max_output_bytes));
}

}  // namespace

Value apply_filter(Renderer& r, std::string_view name, const Value& input, CallArgs& args) {
  const std::string fname(name);
  if (name == "tojson") return tojson(r, input, args);
  if (name == "default" || name == "d") {
    BoundArgs a(fname, args, {"default_value", "boolean"});
    const bool boolean = a.get(1) && truthy(*a.get(1));
    if (input.is_undefined() || (boolean && !truthy(input))) return a.value_or(0, Value(""));
    return input;
  }
  if (name == "length" || name == "count") return Value(length_of(input));
  if (name == "trim") {
    BoundArgs a(fname, args, {"chars"});
    std::optional<std::string> chars;
    if (a.get(0) && !a.get(0)->is_none()) chars = to_str(*a.get(0));
    return Value(str_strip(to_str(input), chars, true, true));
  }
  if (name == "string") return Value(to_str(input));
  if (name == "safe") return input.is_markup() ? input : Value::markup(to_str(input));
  if (name == "upper") return Value(str_upper(to_str(input)));
  if (name == "lower") return Value(str_lower(to_str(input)));
  if (name == "capitalize") return Value(str_capitalize(to_str(input)));
  if (name == "title") return Value(str_title(to_str(input)));
  if (name == "escape" || name == "e") return input.is_markup() ? input : Value::markup(html_escape(to_str(input)));
  if (name == "replace") {
    BoundArgs a(fname, args, {"old", "new", "count"});
    if (!a.get(0) || !a.get(1)) fail("replace() needs the old and the new text");
    const int64_t count = a.get(2) && !a.get(2)->is_none() && a.get(2)->is_int() ? a.get(2)->as_int() : -1;
    const std::string text = to_str(input), old = to_str(*a.get(0)), replacement = to_str(*a.get(1));
    check_replace_size(r, text, old, replacement);
    std::string out = str_replace(text, old, replacement, count);
    r.check_size(out.size());
    return Value(std::move(out));
  }
  if (name == "join") {
    BoundArgs a(fname, args, {"d", "attribute"});
    const std::string sep = a.get(0) ? to_str(*a.get(0)) : "";
    const std::string attribute = attribute_name(a.get(1), "join");
    std::string out;
    bool first = true;
    for (const Value& item : iterate(input)) {
      if (!first) out += sep;
      first = false;
      append_str(out, attribute.empty() ? item : attribute_path(item, attribute));
      r.check_size(out.size());
    }
    return Value(std::move(out));
  }
  if (name == "list") {
    if (input.is_list() && !input.as_list().generator && !input.as_list().tuple) return input;
    return Value::list(iterate(input));
  }
  if (name == "items") {
    if (input.is_undefined()) return generator({});
    if (!input.is_mapping()) fail("Can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& [k, v] : input.as_dict().items) out.push_back(Value::list({Value(k), v}, false, true));
    return generator(std::move(out));
  }
  if (name == "dictsort") {
    BoundArgs a(fname, args, {"case_sensitive", "by", "reverse"});
    if (!input.is_mapping()) fail("You can only sort by either \"key\" or \"value\"");
    const bool cs = a.get(0) && truthy(*a.get(0));
    const bool by_value = a.get(1) && to_str(*a.get(1)) == "value";
    const bool reverse = a.get(2) && truthy(*a.get(2));
    std::vector<Value> pairs;
    for (const auto& [k, v] : input.as_dict().items) pairs.push_back(Value::list({Value(k), v}, false, true));
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
      const Value kx = sort_key(x.as_list().items[by_value ? 1 : 0], cs);
      const Value ky = sort_key(y.as_list().items[by_value ? 1 : 0], cs);
      return reverse ? less(ky, kx) : less(kx, ky);
    });
    return Value::list(std::move(pairs));
  }
  if (name == "first" || name == "last") {
    std::vector<Value> items = iterate(input);
    if (name == "last" && input.is_list() && input.as_list().generator) fail("'generator' object is not reversible");
    if (items.empty())
      return Value::undefined(std::string("No ") + (name == "first" ? "first" : "last") + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "map") return map_items(r, input, args);
  if (name == "select") return select_items(r, input, args, false, true);
  if (name == "reject") return select_items(r, input, args, false, false);
  if (name == "selectattr") return select_items(r, input, args, true, true);
  if (name == "rejectattr") return select_items(r, input, args, true, false);
  if (name == "sort") {
    BoundArgs a(fname, args, {"reverse", "case_sensitive", "attribute"});
    return sorted(input, a.get(0) && truthy(*a.get(0)), a.get(1) && truthy(*a.get(1)),
                  attribute_name(a.get(2), "sort"));
  }
  if (name == "unique") {
    BoundArgs a(fname, args, {"case_sensitive", "attribute"});
    const bool cs = a.get(0) && truthy(*a.get(0));
    const std::string attribute = attribute_name(a.get(1), "unique");
    std::vector<Value> seen, out;
    for (const Value& item : iterate(input)) {
      const Value key = sort_key(attribute.empty() ? item : attribute_path(item, attribute), cs);
      r.charge(Value::list({}));  // a step per item, and seen.size() comparisons below
      for (std::size_t k = 0; k < seen.size(); k += 1024) r.step();
      if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, key); })) continue;
      seen.push_back(key);
      out.push_back(item);
    }
    return generator(std::move(out));
  }
  if (name == "reverse") {
    if (input.is_string()) return Value(str_slice(input.as_string(), std::nullopt, std::nullopt, -1));
    std::vector<Value> items = iterate(input);
    std::reverse(items.begin(), items.end());
    return generator(std::move(items));
  }
  if (name == "int") {
    BoundArgs a(fname, args, {"default", "base"});
    const int base = a.get(1) && a.get(1)->is_int() ? static_cast<int>(a.get(1)->as_int()) : 10;
    if (auto i = parse_int(input, base)) return Value(*i);
    return a.value_or(0, Value(int64_t{0}));
  }
  if (name == "float") {
    BoundArgs a(fname, args, {"default"});
    if (auto d = parse_float(input)) return Value(*d);
    return a.value_or(0, Value(0.0));
  }
  if (name == "abs") {
    if (input.is_float()) return Value(std::fabs(input.as_float()));
    if (input.is_int() || input.is_bool()) {
      const int64_t i = input.is_int() ? input.as_int() : input.as_bool();
      if (i == INT64_MIN) fail("integer overflow: the result does not fit in 64 bits");
      return Value(i < 0 ? -i : i);
    }
    fail("bad operand type for abs(): '" + std::string(input.type_name()) + "'");
  }
  if (name == "round") {
    BoundArgs a(fname, args, {"precision", "method"});
    const int64_t precision = a.get(0) && a.get(0)->is_int() ? a.get(0)->as_int() : 0;
    const std::string method = a.get(1) ? to_str(*a.get(1)) : "common";
    if (!input.is_number()) fail("type " + std::string(input.type_name()) + " doesn't define __round__ method");
    if (!input.is_float() && method == "common")
      return Value(input.is_int() ? input.as_int() : int64_t{input.as_bool()});
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = input.to_double();
    if (method == "floor") return Value(std::floor(x * scale) / scale);
    if (method == "ceil") return Value(std::ceil(x * scale) / scale);
    if (method != "common") fail("method must be common, ceil or floor");
    return Value(py_round(x, precision));
  }
  if (name == "indent") {
    BoundArgs a(fname, args, {"width", "first", "blank"});
    const Value width = a.value_or(0, Value(int64_t{4}));
    const std::string text = to_str(input);
    const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 2;
    const std::size_t pad = width.is_string() ? width.as_string().size()
                            : width.is_int()
                                ? static_cast<std::size_t>(std::clamp<int64_t>(width.as_int(), 0, int64_t{1} << 40))
                                : 4;
    if (pad != 0) r.check_size(text.size() + std::min<std::size_t>(pad, std::size_t{1} << 40) * lines);
    std::string out = indent_text(text, width, a.get(1) && truthy(*a.get(1)), a.get(2) && truthy(*a.get(2)));
    r.check_size(out.size());
    return Value(std::move(out));
  }
  if (name == "center") {
    BoundArgs a(fname, args, {"width"});
    const std::string s = to_str(input);
    const int64_t width = a.get(0) && a.get(0)->is_int() ? a.get(0)->as_int() : 80;
    const int64_t len = static_cast<int64_t>(code_point_count(s));
    if (width <= len) return Value(s);
    r.check_size(static_cast<std::size_t>(width));
    const int64_t total = width - len;
    const int64_t left = total / 2 + (total & width & 1);
    return Value(std::string(static_cast<std::size_t>(left), ' ') + s +
                 std::string(static_cast<std::size_t>(total - left), ' '));
  }
  if (name == "wordcount") {
    int64_t n = 0;
    bool in_word = false;
    for (char c : to_str(input)) {
      const bool word =
          std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
      if (word && !in_word) ++n;
      in_word = word;
    }
    return Value(n);
  }
  if (name == "sum") {
    BoundArgs a(fname, args, {"attribute", "start"});
    const std::string attribute = attribute_name(a.get(0), "sum");
    Value total = a.value_or(1, Value(int64_t{0}));
    for (const Value& item : iterate(input)) {
      const Value v = attribute.empty() ? item : attribute_path(item, attribute);
      if (!total.is_number() || !v.is_number())
        fail("unsupported operand type(s) for +: '" + std::string(total.type_name()) + "' and '" +
             std::string(v.type_name()) + "'");
      if (total.is_float() || v.is_float()) {
        total = Value(total.to_double() + v.to_double());
      } else {
        auto as_integer = [](const Value& x) { return x.is_int() ? x.as_int() : static_cast<int64_t>(x.as_bool()); };
        int64_t s = 0;
        if (__builtin_add_overflow(as_integer(total), as_integer(v), &s))
          fail("integer overflow: the result does not fit in 64 bits");
        total = Value(s);
      }
    }
    return total;
  }
  if (name == "min" || name == "max") return min_max(input, args, name == "max");
  if (name == "attr") {
    BoundArgs a(fname, args, {"name"});
    if (!a.get(0) || !a.get(0)->is_string()) fail("attr() needs an attribute name");
    return get_attribute(input, a.get(0)->as_string());
  }
  if (name == "format") {
    // "%s, %s" | format(a, b): Python's % with the arguments as a tuple.
    return Value(percent_format(r, to_str(input), Value::list(args.positional, false, true)));
  }
  fail("No filter named '" + fname + "'.");
}

}  // namespace kvgate::jinja
