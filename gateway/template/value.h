// A Jinja value, with the semantics Python gives the same object when
// Jinja2 renders a template: truthiness, equality, ordering, str() and
// repr(). Templates are written against Python's behaviour (a float prints
// as "1.0", a list as "['a', None]", a missing key is an Undefined that
// renders empty but fails when used), so the renderer can only match
// Hugging Face's output byte for byte by copying those rules exactly.
//
// Lists and dicts are shared, immutable once built (the template runs in an
// immutable sandbox: `messages.append(x)` is refused); the one mutable
// object is a `namespace()`, whose attributes `{% set ns.x = ... %}` writes.
// Dict keys are strings (every dict a template sees comes from JSON or a
// literal with string keys) and keep their insertion order, as Python's do.
//
// Values are copied freely; a copy of a list or dict shares its items.
// Not thread-safe to mutate a namespace from two threads; a render owns
// the namespaces it creates.
#pragma once

#include <cstdint>
#include <string_view>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kvgate::jinja {

class Value;
class Renderer;

// Arguments of a call: positional, then keyword, as written.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Something a template can call: a macro, a global such as range(), a
// string's bound method. `name` is what an error names it by.
class Callable {
 public:
  virtual ~Callable() = default;
  virtual Value call(Renderer& r, CallArgs& args) const = 0;
  virtual std::string_view type_name() const { return "function"; }
};

// What a missing name, key or item evaluates to. Rendering it prints
// nothing; using it raises message(): "'x' is undefined", "'dict object'
// has no attribute 'y'", or a sandbox refusal. Templates test for missing
// keys constantly (`m.tool_calls is defined`), so the message is written
// only when raised.
struct Undefined {
  enum class Form : uint8_t { kHint, kName, kAttribute, kElement };
  Form form = Form::kHint;
  bool security = false;   // a sandbox refusal, not a missing name
  std::string text;        // the hint, the name, the attribute, or the element's repr
  std::string_view owner;  // kAttribute, kElement: "dict object", "None", ... (static text)
  std::string message() const;
};

// Lists and dicts nest at most this deep, so that printing, comparing and
// freeing one never recurses without bound (Python would raise RecursionError).
inline constexpr int kMaxValueDepth = 256;

struct ListData {
  std::vector<Value> items;
  int depth = 1;  // 1 + the deepest item's
  // map()/select() and friends return Python generators: iterable, but
  // tojson and length refuse them (real templates hit this; see tests).
  bool generator = false;
  bool tuple = false;  // printed (a, b) instead of [a, b]
};

struct DictData {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;
  int depth = 1;  // as ListData's; a namespace, which can change, counts as 0 inside others
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  void set(std::string key, Value v);
};

using ListPtr = std::shared_ptr<const ListData>;
using DictPtr = std::shared_ptr<DictData>;  // mutable only as a namespace
using CallablePtr = std::shared_ptr<const Callable>;

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };

  Value() : v_(Undefined{}) {}
  static Value undefined(std::string hint, bool security = false) {
    Value v;
    v.v_ = Undefined{Undefined::Form::kHint, security, std::move(hint), {}};
    return v;
  }
  static Value undefined(Undefined::Form form, std::string text, std::string_view owner = {}) {
    Value v;
    v.v_ = Undefined{form, false, std::move(text), owner};
    return v;
  }
  static Value none() { return Value(std::monostate{}); }
  // Text marked safe (`| safe`, `| escape`): Python's markupsafe.Markup,
  // which HTML-escapes a plain string added to it ("a" | safe + "<" is
  // "a&lt;"); real templates depend on it.
  static Value markup(std::string s) {
    Value v(std::move(s));
    v.markup_ = true;
    return v;
  }
  Value(bool b) : v_(b) {}
  Value(int64_t i) : v_(i) {}
  Value(int i) : v_(int64_t{i}) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(ListPtr l) : v_(std::move(l)) {}
  Value(DictPtr d) : v_(std::move(d)) {}
  Value(CallablePtr c) : v_(std::move(c)) {}

  // Throw TemplateError (kLimit) past kMaxValueDepth.
  static Value list(std::vector<Value> items, bool generator = false, bool tuple = false);
  static Value dict(std::vector<std::pair<std::string, Value>> items = {});
  // How deep a list or dict nests (0 for anything else, namespaces included).
  int depth() const;

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  // Python's numbers: bool is an int.
  bool is_number() const { return is_bool() || is_int() || is_float(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_markup() const { return markup_; }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_mapping() const { return is_dict() && !as_dict().is_namespace; }
  bool is_callable() const { return kind() == Kind::kCallable; }

  const Undefined& as_undefined() const { return std::get<Undefined>(v_); }
  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const ListData& as_list() const { return *std::get<ListPtr>(v_); }
  const ListPtr& list_ptr() const { return std::get<ListPtr>(v_); }
  const DictData& as_dict() const { return *std::get<DictPtr>(v_); }
  const DictPtr& dict_ptr() const { return std::get<DictPtr>(v_); }
  const Callable& as_callable() const { return *std::get<CallablePtr>(v_); }

  // int or bool as an integer; float as a double (is_number() first).
  double to_double() const;

  // Python's type name, as its error messages write it: 'str', 'dict', ...
  std::string_view type_name() const;

 private:
  explicit Value(std::monostate m) : v_(m) {}
  // The order is Kind's.
  std::variant<Undefined, std::monostate, bool, int64_t, double, std::string, ListPtr, DictPtr, CallablePtr> v_;
  bool markup_ = false;
};

// Python's bool(v).
bool truthy(const Value& v);
// Python's v == w (1 == 1.0 == True; lists and dicts by content).
bool equal(const Value& a, const Value& b);
// Python's a < b for numbers, strings and lists; throws TemplateError
// ("'<' not supported between instances of 'str' and 'int'") otherwise.
bool less(const Value& a, const Value& b, std::string_view op = "<");

// Python's str(v) (what {{ v }} prints): Undefined is empty, None "None",
// floats as repr, strings as they are, containers as repr.
std::string to_str(const Value& v);
void append_str(std::string& out, const Value& v);
// Python's repr(v): strings quoted as Python quotes them.
std::string to_repr(const Value& v);

// markupsafe's escape: & < > " ' as HTML entities.
std::string html_escape(std::string_view s);

// repr(float): the shortest text that reads back, in Python's layout
// ("1.0", "1e+16", "0.0001", "1e-05", "inf", "nan").
std::string float_repr(double d);

}  // namespace kvgate::jinja
