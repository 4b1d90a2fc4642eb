#include "engine/grammar/json_schema.h"

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <boost/json.hpp>

#include "base/error.h"
#include "engine/grammar/regex.h"

namespace kvgate::grammar {
namespace {

namespace json = boost::json;

constexpr int64_t kIntCap = 999999999999999;  // 15 digits: every bound and value fits an int64 with room

// Keywords that carry no constraint: accepted and ignored.
const std::set<std::string, std::less<>> kAnnotations = {
    "title", "description", "$schema", "$id", "$comment", "default", "examples", "deprecated",
    "readOnly", "writeOnly", "$defs", "definitions"};
// Keywords compiled exactly (or, for number bounds and additionalProperties,
// as docs/grammar.md says).
const std::set<std::string, std::less<>> kSupported = {
    "type", "properties", "required", "additionalProperties", "enum", "const", "items", "minItems", "maxItems",
    "minLength", "maxLength", "anyOf", "oneOf", "allOf", "$ref", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "pattern", "format"};

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string child(const std::string& path, std::string_view key) { return path + "/" + pointer_token(key); }

[[noreturn]] void refuse(const std::string& keyword, const std::string& path, const std::string& why = "") {
  throw Error("json schema: unsupported keyword \"" + keyword + "\" at " + path + (why.empty() ? "" : ": " + why));
}

[[noreturn]] void invalid(const std::string& path, const std::string& why) {
  throw Error("json schema: invalid schema at " + path + ": " + why);
}

class Compiler {
 public:
  Compiler(const json::value& root, const SchemaCaps& caps) : root_(root), caps_(caps) {
    g_->nodes.push_back(Node{});  // node 0: kNever
  }

  std::shared_ptr<const Grammar> run() {
    g_->root = compile(root_, "#", 0, 0);
    if (g_->root == kNever) throw Error("json schema: no JSON value satisfies the schema within the caps");
    return std::move(g_);
  }

  std::shared_ptr<const Grammar> any_object() {
    g_->root = any_object_node(0);
    return std::move(g_);
  }

 private:
  static constexpr uint32_t kNever = 0;

  uint32_t add(Node n) {
    switch (n.kind) {
      case NodeKind::kSeq:
        for (uint32_t c : n.children)
          if (c == kNever) return kNever;
        if (n.children.size() == 1) return n.children[0];
        break;
      case NodeKind::kAlt:
        n.children.erase(std::remove(n.children.begin(), n.children.end(), kNever), n.children.end());
        if (n.children.empty()) return kNever;
        if (n.children.size() == 1) return n.children[0];
        break;
      case NodeKind::kList:
        if (n.children[0] == kNever) {
          if (n.min_items > 0) return kNever;
          n.max_items = 0;
        }
        if (n.min_items > n.max_items) return kNever;
        break;
      default:
        break;
    }
    g_->nodes.push_back(std::move(n));
    return static_cast<uint32_t>(g_->nodes.size() - 1);
  }

  uint32_t literal(std::string text) {
    Node n;
    n.kind = NodeKind::kLiteral;
    n.literal = std::move(text);
    return add(std::move(n));
  }
  uint32_t seq(std::vector<uint32_t> parts) {
    Node n;
    n.kind = NodeKind::kSeq;
    n.children = std::move(parts);
    return add(std::move(n));
  }
  uint32_t alt(std::vector<uint32_t> choices) {
    Node n;
    n.kind = NodeKind::kAlt;
    n.children = std::move(choices);
    return add(std::move(n));
  }
  uint32_t list(char open, char close, uint32_t item, uint32_t min_items, uint32_t max_items) {
    Node n;
    n.kind = NodeKind::kList;
    n.open = open;
    n.close = close;
    n.children = {item};
    n.min_items = min_items;
    n.max_items = max_items;
    return add(std::move(n));
  }
  uint32_t integer(int64_t lo, int64_t hi) {
    lo = std::max(lo, -kIntCap);
    hi = std::min(hi, kIntCap);
    if (lo > hi) return kNever;
    Node n;
    n.kind = NodeKind::kInt;
    n.lo = lo;
    n.hi = hi;
    n.max_digits = 15;
    return add(std::move(n));
  }
  // A leaf DFA, built once per (key, bounds) however often the schema uses it.
  uint32_t dfa_leaf(const std::string& key, const Regex& r, uint32_t min_chars, uint32_t max_chars,
                    const char* what) {
    const auto k = std::make_tuple(key, min_chars, max_chars);
    auto it = dfa_ids_.find(k);
    if (it == dfa_ids_.end()) {
      ByteDfa d = ByteDfa::build(r, min_chars, max_chars, what);
      if (!d.satisfiable()) return kNever;
      g_->dfas.push_back(std::move(d));
      it = dfa_ids_.emplace(k, static_cast<uint32_t>(g_->dfas.size() - 1)).first;
    }
    Node n;
    n.kind = NodeKind::kDfa;
    n.dfa = it->second;
    return add(std::move(n));
  }

  uint32_t plain_string(uint32_t min_chars, uint32_t max_chars) {
    static const Regex r =
        regex_concat({regex_literal("\""), regex_star(any_json_string_char()), regex_literal("\"")});
    return dfa_leaf("string", r, min_chars, max_chars, "a string");
  }

  uint32_t number_node() {
    // -?(0|[1-9]d*)(.d+)?([eE][+-]?d{1,2})?, integer and fraction digits
    // counted against max_number_digits; exponent digits not counted.
    const Regex digit = regex_bytes({{'0', '9'}}, true);
    const Regex int_part = regex_alt({regex_bytes({{'0', '0'}}, true),
                                      regex_concat({regex_bytes({{'1', '9'}}, true), regex_star(digit)})});
    const Regex frac = regex_repeat(regex_concat({regex_literal("."), digit, regex_star(digit)}), 0, 1);
    const Regex exp_digit = regex_bytes({{'0', '9'}}, false);
    const Regex exp = regex_repeat(regex_concat({regex_alt({regex_literal("e"), regex_literal("E")}),
                                                 regex_repeat(regex_alt({regex_literal("+"), regex_literal("-")}), 0, 1),
                                                 regex_repeat(exp_digit, 1, 2)}),
                                   0, 1);
    const Regex r = regex_concat({regex_repeat(regex_literal("-"), 0, 1), int_part, frac, exp});
    return dfa_leaf("number", r, 0, caps_.max_number_digits, "a number");
  }

  uint32_t any_value(uint32_t depth) {
    if (auto it = any_.find(depth); it != any_.end()) return it->second;
    const uint32_t id = alt({any_object_node(depth), any_array(depth), plain_string(0, caps_.max_string_chars),
                             number_node(), literal("true"), literal("false"), literal("null")});
    any_[depth] = id;
    return id;
  }
  uint32_t any_object_node(uint32_t depth) {
    if (depth >= caps_.max_nesting) return kNever;
    const uint32_t member = seq({plain_string(0, caps_.max_string_chars), literal(":"), any_value(depth + 1)});
    return list('{', '}', member, 0, caps_.max_items);
  }
  uint32_t any_array(uint32_t depth) {
    if (depth >= caps_.max_nesting) return kNever;
    return list('[', ']', any_value(depth + 1), 0, caps_.max_items);
  }

  static uint32_t count(const json::object& s, std::string_view key, const std::string& path) {
    const json::value* v = s.if_contains(key);
    if (!v) return 0;
    if (v->is_int64() && v->as_int64() >= 0) return static_cast<uint32_t>(std::min<int64_t>(v->as_int64(), 1 << 30));
    if (v->is_uint64()) return 1 << 30;
    if (v->is_double() && v->as_double() >= 0 && std::floor(v->as_double()) == v->as_double())
      return static_cast<uint32_t>(std::min(v->as_double(), double(1 << 30)));
    invalid(child(path, key), "a non-negative integer expected");
  }

  static std::optional<double> number_of(const json::object& s, std::string_view key, const std::string& path) {
    const json::value* v = s.if_contains(key);
    if (!v) return std::nullopt;
    if (v->is_int64()) return static_cast<double>(v->as_int64());
    if (v->is_uint64()) return static_cast<double>(v->as_uint64());
    if (v->is_double()) return v->as_double();
    if (v->is_bool()) return std::nullopt;  // draft 4's boolean exclusive bounds, read beside minimum/maximum
    invalid(child(path, key), "a number expected");
  }

  // The integer bounds of a schema: [lo, hi] after exclusive bounds.
  static std::pair<double, double> integer_bounds(const json::object& s, const std::string& path) {
    double lo = -INFINITY, hi = INFINITY;
    const auto draft4 = [&](std::string_view key) {
      const json::value* v = s.if_contains(key);
      return v && v->is_bool() && v->as_bool();
    };
    if (auto m = number_of(s, "minimum", path)) lo = draft4("exclusiveMinimum") ? std::floor(*m) + 1 : std::ceil(*m);
    if (auto m = number_of(s, "maximum", path)) hi = draft4("exclusiveMaximum") ? std::ceil(*m) - 1 : std::floor(*m);
    if (auto m = number_of(s, "exclusiveMinimum", path)) lo = std::max(lo, std::floor(*m) + 1);
    if (auto m = number_of(s, "exclusiveMaximum", path)) hi = std::min(hi, std::ceil(*m) - 1);
    return {lo, hi};
  }
  uint32_t integer_in(std::pair<double, double> b) {
    const auto clamp = [](double x) { return static_cast<int64_t>(std::clamp(x, double(-kIntCap - 1), double(kIntCap + 1))); };
    return integer(clamp(b.first), clamp(b.second));
  }

  uint32_t string_node(const json::object& s, const std::string& path) {
    const uint32_t min_chars = count(s, "minLength", path);
    uint32_t max_chars = s.contains("maxLength") ? count(s, "maxLength", path) : caps_.max_string_chars;
    max_chars = std::min(max_chars, kMaxCountedChars);
    if (min_chars > max_chars) return kNever;
    const json::value* pattern = s.if_contains("pattern");
    const json::value* format = s.if_contains("format");
    if (pattern && format) refuse("format", child(path, "format"), "beside \"pattern\"");
    if (pattern) {
      if (!pattern->is_string()) invalid(child(path, "pattern"), "a string expected");
      const std::string p(pattern->as_string());
      const Regex r = regex_concat({regex_literal("\""), parse_pattern(p, child(path, "pattern")), regex_literal("\"")});
      return dfa_leaf("pattern:" + p, r, min_chars, max_chars, "the pattern");
    }
    if (format) {
      if (!format->is_string()) invalid(child(path, "format"), "a string expected");
      const std::string f(format->as_string());
      static const std::map<std::string, std::string, std::less<>> kFormats = {
          {"date", "\\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|02-(0[1-9]|1\\d|2[0-8]))"},
          {"time", "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,6})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)"},
          {"date-time",
           "\\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|02-(0[1-9]|1\\d|2[0-8]))"
           "T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,6})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)"},
          {"uuid", "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"},
          {"email", "[a-z0-9_+-]{1,16}(\\.[a-z0-9_+-]{1,16}){0,2}@([a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?\\.){1,2}[a-z]{2,8}"},
      };
      const auto it = kFormats.find(f);
      if (it == kFormats.end()) refuse("format", child(path, "format"), "format \"" + f + "\" is not supported");
      const Regex r = regex_concat({regex_literal("\""), parse_pattern(it->second, "format"), regex_literal("\"")});
      return dfa_leaf("format:" + f, r, min_chars, max_chars, "the format");
    }
    return plain_string(min_chars, max_chars);
  }

  uint32_t array_node(const json::object& s, const std::string& path, uint32_t depth, uint32_t refs) {
    if (depth >= caps_.max_nesting) return kNever;
    uint32_t item;
    if (const json::value* items = s.if_contains("items")) {
      if (items->is_array()) refuse("items", child(path, "items"), "a list of schemas (tuple form)");
      item = compile(*items, child(path, "items"), depth + 1, refs);
    } else {
      item = any_value(depth + 1);
    }
    const uint32_t min_items = count(s, "minItems", path);
    if (min_items > kMaxItemsHard) refuse("minItems", child(path, "minItems"), "above the cap of " + std::to_string(kMaxItemsHard));
    const uint32_t max_items =
        std::min(s.contains("maxItems") ? count(s, "maxItems", path) : caps_.max_items, kMaxItemsHard);
    return list('[', ']', item, min_items, std::max(max_items, s.contains("maxItems") ? max_items : min_items));
  }

  uint32_t object_node(const json::object& s, const std::string& path, uint32_t depth, uint32_t refs) {
    if (depth >= caps_.max_nesting) return kNever;
    const json::value* props = s.if_contains("properties");
    const json::value* req = s.if_contains("required");
    if (const json::value* ap = s.if_contains("additionalProperties"); ap && !ap->is_bool() && !ap->is_object())
      invalid(child(path, "additionalProperties"), "a boolean or a schema expected");
    if (!props && !req) return any_object_node(depth);
    struct Property {
      std::string key;
      const json::value* schema;
      bool required;
    };
    std::vector<Property> list_props;
    static const json::value kTrue = true;
    if (props) {
      if (!props->is_object()) invalid(child(path, "properties"), "an object expected");
      for (const auto& kv : props->as_object())
        list_props.push_back({std::string(kv.key()), &kv.value(), false});
    }
    if (req) {
      if (!req->is_array()) invalid(child(path, "required"), "an array of strings expected");
      for (const json::value& r : req->as_array()) {
        if (!r.is_string()) invalid(child(path, "required"), "an array of strings expected");
        const std::string_view name = r.as_string();
        auto it = std::find_if(list_props.begin(), list_props.end(), [&](const Property& p) { return p.key == name; });
        if (it == list_props.end()) list_props.push_back({std::string(name), &kTrue, true});
        else it->required = true;
      }
    }
    // Members in the order written: tail[i][c] reads the members from i on,
    // c saying whether one was written before (so a comma comes first).
    const size_t n = list_props.size();
    std::vector<uint32_t> values(n);
    for (size_t i = 0; i < n; ++i)
      values[i] = compile(*list_props[i].schema, child(child(path, "properties"), list_props[i].key), depth + 1, refs);
    std::vector<std::array<uint32_t, 2>> tail(n + 1);
    tail[n] = {seq({}), seq({})};
    for (size_t i = n; i-- > 0;) {
      for (int c = 0; c < 2; ++c) {
        std::string key = json::serialize(json::string(list_props[i].key));
        key.push_back(':');
        if (c) key.insert(key.begin(), ',');
        const uint32_t present = seq({literal(key), values[i], tail[i + 1][1]});
        tail[i][c] = list_props[i].required ? present : alt({present, tail[i + 1][c]});
      }
    }
    return seq({literal("{"), tail[0][0], literal("}")});
  }

  // The JSON kinds a value has, for filtering enum values by type.
  static bool has_type(const json::value& v, std::string_view t) {
    if (t == "null") return v.is_null();
    if (t == "boolean") return v.is_bool();
    if (t == "string") return v.is_string();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "number") return v.is_number();
    if (t == "integer")
      return v.is_int64() || v.is_uint64() || (v.is_double() && std::floor(v.as_double()) == v.as_double());
    return false;
  }

  std::vector<std::string> types_of(const json::object& s, const std::string& path) {
    const json::value* t = s.if_contains("type");
    if (!t) return {};
    static const std::set<std::string, std::less<>> kTypes = {"object", "array", "string", "number",
                                                              "integer", "boolean", "null"};
    std::vector<std::string> out;
    auto one = [&](const json::value& v) {
      if (!v.is_string() || !kTypes.count(v.as_string()))
        invalid(child(path, "type"), "a type name or an array of type names expected");
      out.emplace_back(v.as_string());
    };
    if (t->is_array())
      for (const json::value& v : t->as_array()) one(v);
    else
      one(*t);
    if (out.empty()) invalid(child(path, "type"), "an empty list of types");
    return out;
  }

  uint32_t compile(const json::value& v, const std::string& path, uint32_t depth, uint32_t refs) {
    if (v.is_bool()) return v.as_bool() ? any_value(depth) : kNever;
    if (!v.is_object()) invalid(path, "a schema is an object or a boolean");
    const json::object& s = v.as_object();
    bool constraints = false;
    for (const auto& kv : s) {
      if (kAnnotations.count(kv.key())) continue;
      if (!kSupported.count(kv.key())) refuse(std::string(kv.key()), child(path, kv.key()));
      constraints = true;
    }
    if (!constraints) return any_value(depth);

    // Combinators stand alone: beside them only annotations.
    for (const char* comb : {"$ref", "anyOf", "oneOf", "allOf"}) {
      if (!s.contains(comb)) continue;
      for (const auto& kv : s)
        if (kv.key() != comb && !kAnnotations.count(kv.key()))
          refuse(std::string(kv.key()), child(path, kv.key()), std::string("beside \"") + comb + "\"");
    }
    if (const json::value* ref = s.if_contains("$ref")) return resolve_ref(*ref, child(path, "$ref"), depth, refs);
    for (const char* comb : {"anyOf", "oneOf", "allOf"}) {
      const json::value* list_v = s.if_contains(comb);
      if (!list_v) continue;
      const std::string at = child(path, comb);
      if (!list_v->is_array() || list_v->as_array().empty()) invalid(at, "a non-empty array of schemas expected");
      const json::array& arr = list_v->as_array();
      if (std::string_view(comb) == "allOf" && arr.size() != 1)
        refuse("allOf", at, "only a single schema is supported");
      std::vector<uint32_t> choices;
      for (size_t i = 0; i < arr.size(); ++i) choices.push_back(compile(arr[i], child(at, std::to_string(i)), depth, refs));
      return alt(std::move(choices));
    }

    const std::vector<std::string> types = types_of(s, path);
    const json::value* en = s.if_contains("enum");
    const json::value* cn = s.if_contains("const");
    if (en || cn) {
      if (en && cn) refuse("const", child(path, "const"), "beside \"enum\"");
      std::vector<uint32_t> choices;
      auto add_value = [&](const json::value& x) {
        if (!types.empty() &&
            std::none_of(types.begin(), types.end(), [&](const std::string& t) { return has_type(x, t); }))
          return;
        choices.push_back(literal(json::serialize(x)));
      };
      if (cn) {
        add_value(*cn);
      } else {
        if (!en->is_array()) invalid(child(path, "enum"), "an array expected");
        for (const json::value& x : en->as_array()) add_value(x);
      }
      return alt(std::move(choices));
    }

    std::vector<std::string> kinds = types;
    if (kinds.empty()) {  // no type: what the keywords speak of
      if (s.contains("properties") || s.contains("required") || s.contains("additionalProperties")) kinds.push_back("object");
      if (s.contains("items") || s.contains("minItems") || s.contains("maxItems")) kinds.push_back("array");
      if (s.contains("minLength") || s.contains("maxLength") || s.contains("pattern") || s.contains("format"))
        kinds.push_back("string");
      if (s.contains("minimum") || s.contains("maximum") || s.contains("exclusiveMinimum") || s.contains("exclusiveMaximum"))
        kinds.push_back("number");
      if (kinds.empty()) return any_value(depth);
    }
    std::vector<uint32_t> choices;
    for (const std::string& t : kinds) {
      if (t == "null") choices.push_back(literal("null"));
      else if (t == "boolean") choices.push_back(alt({literal("true"), literal("false")}));
      else if (t == "string") choices.push_back(string_node(s, path));
      else if (t == "integer") choices.push_back(integer_in(integer_bounds(s, path)));
      else if (t == "number") choices.push_back(number(s, path));
      else if (t == "array") choices.push_back(array_node(s, path, depth, refs));
      else if (t == "object") choices.push_back(object_node(s, path, depth, refs));
    }
    return alt(std::move(choices));
  }

  uint32_t number(const json::object& s, const std::string& path) {
    const bool bounded = s.contains("minimum") || s.contains("maximum") || s.contains("exclusiveMinimum") ||
                         s.contains("exclusiveMaximum");
    if (!bounded) return number_node();
    // Bounded numbers are generated as the integers inside the bounds.
    const auto b = integer_bounds(s, path);
    if (b.first > b.second)
      refuse("minimum", path, "number bounds with no integer between them are not supported");
    return integer_in(b);
  }

  uint32_t resolve_ref(const json::value& ref, const std::string& path, uint32_t depth, uint32_t refs) {
    if (!ref.is_string()) invalid(path, "a string expected");
    const std::string_view r = ref.as_string();
    if (r.empty() || r[0] != '#') refuse("$ref", path, "only local references (#/$defs/...) are supported");
    if (refs >= caps_.max_ref_depth) return kNever;  // recursion ends at the cap
    const json::value* target = &root_;
    std::string_view rest = r.substr(1);
    if (!rest.empty() && rest[0] != '/') refuse("$ref", path, "anchors are not supported");
    while (!rest.empty()) {
      rest.remove_prefix(1);
      const size_t slash = rest.find('/');
      std::string token(rest.substr(0, slash));
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
      std::string key;
      for (size_t i = 0; i < token.size(); ++i) {
        if (token[i] == '~' && i + 1 < token.size()) key += token[++i] == '1' ? '/' : '~';
        else key += token[i];
      }
      const json::value* next = nullptr;
      if (target->is_object()) next = target->as_object().if_contains(key);
      else if (target->is_array() && !key.empty() && key.size() <= 9 && std::all_of(key.begin(), key.end(), ::isdigit) &&
               std::stoul(key) < target->as_array().size())
        next = &target->as_array()[std::stoul(key)];
      if (!next) invalid(path, "\"" + std::string(r) + "\" names nothing in the schema");
      target = next;
    }
    return compile(*target, std::string(r), depth, refs + 1);
  }

  const json::value& root_;
  const SchemaCaps caps_;
  std::shared_ptr<Grammar> g_ = std::make_shared<Grammar>();
  std::map<std::tuple<std::string, uint32_t, uint32_t>, uint32_t> dfa_ids_;
  std::map<uint32_t, uint32_t> any_;
};

}  // namespace

std::shared_ptr<const Grammar> compile_json_schema(const json::value& schema, const SchemaCaps& caps) {
  const size_t size = json::serialize(schema).size();
  if (size > caps.max_schema_bytes)
    throw Error("json schema: the schema is " + std::to_string(size) + " bytes, over the limit of " +
                std::to_string(caps.max_schema_bytes));
  return Compiler(schema, caps).run();
}

std::shared_ptr<const Grammar> compile_json_schema(std::string_view text, const SchemaCaps& caps) {
  if (text.size() > caps.max_schema_bytes)
    throw Error("json schema: the schema is " + std::to_string(text.size()) + " bytes, over the limit of " +
                std::to_string(caps.max_schema_bytes));
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec) throw Error("json schema: not JSON: " + ec.message());
  return compile_json_schema(v, caps);
}

std::shared_ptr<const Grammar> compile_any_json_object(const SchemaCaps& caps) {
  static const json::value kEmpty = json::object{};
  return Compiler(kEmpty, caps).any_object();
}

}  // namespace kvgate::grammar
