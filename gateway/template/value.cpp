#include "gateway/template/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "gateway/template/template_error.h"

namespace kvgate::jinja {

std::string Undefined::message() const {
  std::string m;
  switch (form) {
    case Form::kName: m.append("'").append(text).append("' is undefined"); return m;
    case Form::kAttribute:
      m.append("'").append(owner).append("' has no attribute '").append(text).append("'");
      return m;
    case Form::kElement: m.append(owner).append(" has no element ").append(text); return m;
    case Form::kHint: break;
  }
  return text;
}

const Value* DictData::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

Value* DictData::find(std::string_view key) {
  for (auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void DictData::set(std::string key, Value v) {
  if (Value* old = find(key)) {
    *old = std::move(v);
    return;
  }
  items.emplace_back(std::move(key), std::move(v));
}

namespace {

int nested_depth(int deepest_item) {
  if (deepest_item + 1 > kMaxValueDepth)
    throw TemplateError(TemplateError::Kind::kLimit,
                        "the template nests lists and dicts deeper than " + std::to_string(kMaxValueDepth));
  return deepest_item + 1;
}

}  // namespace

int Value::depth() const {
  if (is_list()) return as_list().depth;
  if (is_dict() && !as_dict().is_namespace) return as_dict().depth;
  return 0;
}

Value Value::list(std::vector<Value> items, bool generator, bool tuple) {
  int deepest = 0;
  for (const Value& v : items) deepest = std::max(deepest, v.depth());
  auto l = std::make_shared<ListData>();
  l->depth = nested_depth(deepest);
  l->items = std::move(items);
  l->generator = generator;
  l->tuple = tuple;
  return Value(ListPtr(std::move(l)));
}

Value Value::dict(std::vector<std::pair<std::string, Value>> items) {
  int deepest = 0;
  for (const auto& kv : items) deepest = std::max(deepest, kv.second.depth());
  auto d = std::make_shared<DictData>();
  d->depth = nested_depth(deepest);
  d->items = std::move(items);
  return Value(std::move(d));
}

double Value::to_double() const {
  if (is_float()) return as_float();
  if (is_int()) return static_cast<double>(as_int());
  return as_bool() ? 1.0 : 0.0;
}

std::string_view Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return markup_ ? "Markup" : "str";
    case Kind::kList: return as_list().generator ? "generator" : as_list().tuple ? "tuple" : "list";
    case Kind::kDict: return as_dict().is_namespace ? "Namespace" : "dict";
    case Kind::kCallable: return as_callable().type_name();
  }
  return "object";
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool: return v.as_bool();
    case Value::Kind::kInt: return v.as_int() != 0;
    case Value::Kind::kFloat: return v.as_float() != 0.0;
    case Value::Kind::kString: return !v.as_string().empty();
    case Value::Kind::kList: return v.as_list().generator || !v.as_list().items.empty();
    case Value::Kind::kDict: return v.as_dict().is_namespace || !v.as_dict().items.empty();
    case Value::Kind::kCallable: return true;
  }
  return false;
}

bool equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() == b.to_double();
    const int64_t x = a.is_int() ? a.as_int() : a.as_bool();
    const int64_t y = b.is_int() ? b.as_int() : b.as_bool();
    return x == y;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      const auto& x = a.as_list().items;
      const auto& y = b.as_list().items;
      if (a.as_list().generator || b.as_list().generator) return a.list_ptr() == b.list_ptr();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!equal(x[i], y[i])) return false;
      return true;
    }
    case Value::Kind::kDict: {
      if (a.as_dict().is_namespace || b.as_dict().is_namespace) return a.dict_ptr() == b.dict_ptr();
      const auto& x = a.as_dict().items;
      if (x.size() != b.as_dict().items.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* w = b.as_dict().find(k);
        if (!w || !equal(v, *w)) return false;
      }
      return true;
    }
    case Value::Kind::kCallable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

bool less(const Value& a, const Value& b, std::string_view op) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() < b.to_double();
    const int64_t x = a.is_int() ? a.as_int() : a.as_bool();
    const int64_t y = b.is_int() ? b.as_int() : b.as_bool();
    return x < y;
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 bytes order = code points
  if (a.is_list() && b.is_list() && !a.as_list().generator && !b.as_list().generator) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equal(x[i], y[i])) continue;
      return less(x[i], y[i], op);
    }
    return x.size() < y.size();
  }
  if (a.is_undefined() || b.is_undefined()) {
    const Value& u = a.is_undefined() ? a : b;
    fail(u.as_undefined().message());
  }
  std::string msg = "'";
  msg.append(op);
  msg.append("' not supported between instances of '");
  msg.append(a.type_name());
  msg.append("' and '");
  msg.append(b.type_name());
  msg.append("'");
  fail(msg);
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  // The shortest round-trip digits, then Python's layout: positional when
  // the exponent is in [-4, 16), else d.ddde+XX.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  const int exp = std::stoi(sci.substr(e + 1));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out;
  if (neg) out.push_back('-');
  const std::size_t nd = digits.size();
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out.append("0.");
      out.append(static_cast<std::size_t>(-exp - 1), '0');
      out.append(digits);
    } else if (static_cast<std::size_t>(exp) + 1 >= nd) {
      out.append(digits);
      out.append(static_cast<std::size_t>(exp) + 1 - nd, '0');
      out.append(".0");
    } else {
      out.append(digits, 0, static_cast<std::size_t>(exp) + 1);
      out.push_back('.');
      out.append(digits, static_cast<std::size_t>(exp) + 1, std::string::npos);
    }
    return out;
  }
  out.push_back(digits[0]);
  if (nd > 1) {
    out.push_back('.');
    out.append(digits, 1, std::string::npos);
  }
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  out.append(ebuf);
  return out;
}

namespace {

// Python's repr of a str: single quotes unless the text holds a single
// quote and no double one; control characters escaped; other characters,
// non-ASCII included, as they are.
void append_string_repr(std::string& out, const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  for (unsigned char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == static_cast<unsigned char>(quote)) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          char b[8];
          std::snprintf(b, sizeof b, "\\x%02x", c);
          out += b;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += quote;
}

// `active`: the dicts being printed, outermost first. A namespace that holds
// itself prints as Python prints it, "<Namespace {'me': <Namespace {...}>}>";
// lists and plain dicts cannot hold themselves, and nest boundedly; a long
// chain of namespaces is Python's RecursionError.
void append_repr(std::string& out, const Value& v, std::vector<const DictData*>& active) {
  if (active.size() > 2 * kMaxValueDepth) fail("maximum recursion depth exceeded while getting the repr of an object");
  switch (v.kind()) {
    case Value::Kind::kString: append_string_repr(out, v.as_string()); return;
    case Value::Kind::kUndefined: return;  // Undefined's repr is "Undefined"; its str, inside containers, is rare
    case Value::Kind::kList: {
      const ListData& l = v.as_list();
      if (l.generator) {
        out += "<generator object>";
        return;
      }
      out += l.tuple ? '(' : '[';
      for (size_t i = 0; i < l.items.size(); ++i) {
        if (i) out += ", ";
        append_repr(out, l.items[i], active);
      }
      if (l.tuple && l.items.size() == 1) out += ',';
      out += l.tuple ? ')' : ']';
      return;
    }
    case Value::Kind::kDict: {
      const DictData& d = v.as_dict();
      if (d.is_namespace) out += "<Namespace ";
      if (std::find(active.begin(), active.end(), &d) != active.end()) {
        out += d.is_namespace ? "{...}>" : "{...}";
        return;
      }
      active.push_back(&d);
      out += '{';
      bool first = true;
      for (const auto& [k, item] : d.items) {
        if (!first) out += ", ";
        first = false;
        append_string_repr(out, k);
        out += ": ";
        append_repr(out, item, active);
      }
      active.pop_back();
      out += '}';
      if (d.is_namespace) out += '>';
      return;
    }
    default: append_str(out, v);
  }
}

}  // namespace

void append_str(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return;
    case Value::Kind::kNone: out += "None"; return;
    case Value::Kind::kBool: out += v.as_bool() ? "True" : "False"; return;
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
    case Value::Kind::kFloat: out += float_repr(v.as_float()); return;
    case Value::Kind::kString: out += v.as_string(); return;
    case Value::Kind::kCallable: out += "<function>"; return;
    default: {
      std::vector<const DictData*> active;
      append_repr(out, v, active);
    }
  }
}

std::string to_str(const Value& v) {
  if (v.is_string()) return v.as_string();
  std::string out;
  append_str(out, v);
  return out;
}

std::string to_repr(const Value& v) {
  std::string out;
  std::vector<const DictData*> active;
  append_repr(out, v, active);
  return out;
}

}  // namespace kvgate::jinja
