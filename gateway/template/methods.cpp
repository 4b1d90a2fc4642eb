#include "gateway/template/methods.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "gateway/template/call_args.h"
#include "gateway/template/py_string.h"
#include "gateway/template/renderer.h"

namespace kvgate::jinja {
namespace {

// Methods that would change a list or dict: the immutable sandbox refuses them.
constexpr std::array<std::string_view, 8> kListMutators = {"append", "pop",  "insert",  "extend",
                                                           "remove", "sort", "reverse", "clear"};
constexpr std::array<std::string_view, 5> kDictMutators = {"pop", "popitem", "setdefault", "update", "clear"};

template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::optional<std::string> optional_string(const Value* v, std::string_view what) {
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) fail(std::string(what) + " arg must be None or str");
  return v->as_string();
}

int64_t int_arg(const Value* v, int64_t fallback, std::string_view what) {
  if (!v) return fallback;
  if (v->is_int()) return v->as_int();
  if (v->is_bool()) return v->as_bool();
  fail("'" + std::string(v->type_name()) + "' object cannot be interpreted as an integer (" + std::string(what) + ")");
}

const std::string& string_arg(const Value* v, std::string_view method) {
  if (!v) fail(std::string(method) + "() takes at least 1 argument (0 given)");
  if (!v->is_string()) fail("must be str, not " + std::string(v->type_name()));
  return v->as_string();
}

Value string_list(std::vector<std::string> parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (std::string& p : parts) items.emplace_back(std::move(p));
  return Value::list(std::move(items));
}

// startswith/endswith take a string or a tuple of strings.
bool affix_match(const std::string& s, const Value* arg, bool prefix, std::string_view method) {
  if (!arg) fail(std::string(method) + "() takes at least 1 argument (0 given)");
  auto one = [&](const Value& v) {
    if (!v.is_string())
      fail(std::string(method) + " first arg must be str or a tuple of str, not " + std::string(v.type_name()));
    const std::string& a = v.as_string();
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (arg->is_list() && arg->as_list().tuple) {
    return std::any_of(arg->as_list().items.begin(), arg->as_list().items.end(), one);
  }
  return one(*arg);
}

Value call_string_method(Renderer& r, const std::string& s, const std::string& name, CallArgs& args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    BoundArgs a(name, args, {"chars"});
    return Value(str_strip(s, optional_string(a.get(0), name), name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    BoundArgs a(name, args, {"sep", "maxsplit"});
    return string_list(
        str_split(s, optional_string(a.get(0), name), int_arg(a.get(1), -1, "maxsplit"), name == "rsplit"));
  }
  if (name == "startswith" || name == "endswith") {
    BoundArgs a(name, args, {"prefix"});
    return Value(affix_match(s, a.get(0), name == "startswith", name));
  }
  if (name == "upper") return Value(str_upper(s));
  if (name == "lower") return Value(str_lower(s));
  if (name == "title") return Value(str_title(s));
  if (name == "capitalize") return Value(str_capitalize(s));
  if (name == "replace") {
    BoundArgs a(name, args, {"old", "new", "count"});
    check_replace_size(r, s, string_arg(a.get(0), name), string_arg(a.get(1), name));
    std::string out =
        str_replace(s, string_arg(a.get(0), name), string_arg(a.get(1), name), int_arg(a.get(2), -1, "count"));
    r.check_size(out.size());
    return Value(std::move(out));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    BoundArgs a(name, args, {"sub"});
    const std::string& sub = string_arg(a.get(0), name);
    if (name == "count") {
      if (sub.empty()) return Value(static_cast<int64_t>(code_point_count(s) + 1));
      int64_t n = 0;
      for (std::size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value(n);
    }
    const std::size_t p = name[0] == 'r' ? s.rfind(sub) : s.find(sub);
    if (p == std::string::npos) {
      if (name == "index" || name == "rindex") fail("substring not found");
      return Value(int64_t{-1});
    }
    return Value(static_cast<int64_t>(code_point_count(std::string_view(s).substr(0, p))));
  }
  if (name == "join") {
    BoundArgs a(name, args, {"iterable"});
    if (!a.get(0)) fail("join() takes exactly one argument (0 given)");
    std::string out;
    bool first = true;
    for (const Value& v : iterate(*a.get(0))) {
      if (!v.is_string()) fail("sequence item: expected str instance, " + std::string(v.type_name()) + " found");
      if (!first) out += s;
      first = false;
      out += v.as_string();
      r.check_size(out.size());
    }
    return Value(std::move(out));
  }
  if (name == "splitlines") return string_list(str_splitlines(s));
  auto all_of = [&](auto pred) {
    return Value(!s.empty() &&
                 std::all_of(s.begin(), s.end(), [&](char c) { return pred(static_cast<unsigned char>(c)); }));
  };
  if (name == "isdigit") return all_of([](unsigned char c) { return c >= '0' && c <= '9'; });
  if (name == "isspace") return all_of([](unsigned char c) { return is_py_space(static_cast<char>(c)); });
  if (name == "isalpha") return all_of([](unsigned char c) { return std::isalpha(c) != 0; });
  if (name == "isalnum") return all_of([](unsigned char c) { return std::isalnum(c) != 0; });
  if (name == "islower") return Value(str_lower(s) == s && str_upper(s) != s);
  if (name == "isupper") return Value(str_upper(s) == s && str_lower(s) != s);
  fail("'str' object has no attribute '" + name + "'");
}

Value call_dict_method(const Value& self, const std::string& name, CallArgs& args) {
  const DictData& d = self.as_dict();
  if (name == "get") {
    BoundArgs a(name, args, {"key", "default"});
    if (!a.get(0)) fail("get expected at least 1 argument, got 0");
    if (a.get(0)->is_string())
      if (const Value* v = d.find(a.get(0)->as_string())) return *v;
    return a.value_or(1, Value::none());
  }
  BoundArgs a(name, args, {});
  std::vector<Value> out;
  out.reserve(d.items.size());
  for (const auto& [k, v] : d.items) {
    if (name == "keys") {
      out.emplace_back(k);
    } else if (name == "values") {
      out.push_back(v);
    } else {
      out.push_back(Value::list({Value(k), v}, false, true));
    }
  }
  return Value::list(std::move(out));
}

Value call_list_method(const Value& self, const std::string& name, CallArgs& args) {
  BoundArgs a(name, args, {"value"});
  if (!a.get(0)) fail(name + "() takes exactly one argument (0 given)");
  const auto& items = self.as_list().items;
  int64_t n = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!equal(items[i], *a.get(0))) continue;
    if (name == "index") return Value(static_cast<int64_t>(i));
    ++n;
  }
  if (name == "index") fail(to_repr(*a.get(0)) + " is not in list");
  return Value(n);
}

class BoundMethod : public Callable {
 public:
  BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  Value call(Renderer& r, CallArgs& args) const override {
    r.charge(self_);
    if (self_.is_string()) return call_string_method(r, self_.as_string(), name_, args);
    if (self_.is_dict()) return call_dict_method(self_, name_, args);
    return call_list_method(self_, name_, args);
  }
  std::string_view type_name() const override { return "builtin_function_or_method"; }

 private:
  Value self_;
  std::string name_;
};

constexpr std::array<std::string_view, 22> kStringMethods = {
    "strip", "lstrip", "rstrip",     "split",   "rsplit",  "startswith", "endswith", "upper",
    "lower", "title",  "capitalize", "replace", "find",    "rfind",      "index",    "rindex",
    "count", "join",   "splitlines", "isdigit", "isspace", "isalpha"};
constexpr std::array<std::string_view, 4> kStringPredicates = {"isalnum", "islower", "isupper", "isspace"};

}  // namespace

// replace() can grow a text by |new| per match: refuse before building it.
void check_replace_size(Renderer& r, std::string_view s, std::string_view old, std::string_view replacement) {
  std::size_t matches = 0;
  if (old.empty()) {
    matches = code_point_count(s) + 1;
  } else {
    for (std::size_t p = s.find(old); p != std::string_view::npos; p = s.find(old, p + old.size())) ++matches;
  }
  if (replacement.size() > old.size()) r.check_size(s.size() + matches * (replacement.size() - old.size()));
}

std::optional<Value> method_of(const Value& obj, const std::string& name) {
  auto bound = [&] { return Value(CallablePtr(std::make_shared<BoundMethod>(obj, name))); };
  auto unsafe = [&] {
    return Value::undefined(
        "access to attribute '" + name + "' of '" + std::string(obj.type_name()) + "' object is unsafe.", true);
  };
  if (obj.is_string()) {
    if (one_of(kStringMethods, name) || one_of(kStringPredicates, name)) return bound();
  } else if (obj.is_mapping()) {
    if (name == "get" || name == "items" || name == "keys" || name == "values") return bound();
    if (one_of(kDictMutators, name)) return unsafe();
  } else if (obj.is_list() && !obj.as_list().generator) {
    if (name == "index" || name == "count") return bound();
    if (one_of(kListMutators, name)) return unsafe();
  }
  return std::nullopt;
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return {};  // Jinja2's Undefined iterates as empty
    case Value::Kind::kList: return v.as_list().items;
    case Value::Kind::kDict: {
      if (v.as_dict().is_namespace) fail("'Namespace' object is not iterable");
      std::vector<Value> keys;
      keys.reserve(v.as_dict().items.size());
      for (const auto& [k, item] : v.as_dict().items) keys.emplace_back(k);
      return keys;
    }
    case Value::Kind::kString: {
      const std::string& s = v.as_string();
      const auto offsets = code_point_offsets(s);
      std::vector<Value> chars;
      chars.reserve(offsets.size());
      for (std::size_t i = 0; i + 1 < offsets.size(); ++i)
        chars.emplace_back(s.substr(offsets[i], offsets[i + 1] - offsets[i]));
      return chars;
    }
    default: fail("'" + std::string(v.type_name()) + "' object is not iterable");
  }
}

}  // namespace kvgate::jinja
