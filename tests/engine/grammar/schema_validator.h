// An independent JSON-schema validator for the grammar tests: it shares no
// code with engine/grammar (patterns through std::regex, formats by their
// own rules), so a generated output that passes it validates for reasons
// other than "the grammar said so". It knows the keywords the grammar
// supports, with the standard's meaning (oneOf: exactly one).
#pragma once

#include <cmath>
#include <regex>
#include <string>

#include <boost/json.hpp>

namespace kvgate::testing {

class SchemaValidator {
 public:
  explicit SchemaValidator(const boost::json::value& root) : root_(root) {}

  bool valid(const boost::json::value& v) const { return check(v, root_); }

 private:
  static size_t codepoints(std::string_view s) {
    size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  }
  static bool is_integer(const boost::json::value& v) {
    return v.is_int64() || v.is_uint64() || (v.is_double() && std::floor(v.as_double()) == v.as_double());
  }
  static double num(const boost::json::value& v) {
    return v.is_int64() ? double(v.as_int64()) : v.is_uint64() ? double(v.as_uint64()) : v.as_double();
  }
  static bool type_is(const boost::json::value& v, std::string_view t) {
    if (t == "null") return v.is_null();
    if (t == "boolean") return v.is_bool();
    if (t == "string") return v.is_string();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "number") return v.is_number();
    if (t == "integer") return v.is_number() && is_integer(v);
    return false;
  }
  static bool valid_date(const std::string& s) {
    static const std::regex re(R"(^(\d{4})-(\d{2})-(\d{2})$)");
    std::smatch m;
    if (!std::regex_match(s, m, re)) return false;
    const int y = std::stoi(m[1]), mo = std::stoi(m[2]), d = std::stoi(m[3]);
    static const int days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > days[mo - 1]) return false;
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return !(mo == 2 && d == 29 && !leap);
  }
  static bool valid_format(const std::string& f, const std::string& s) {
    if (f == "date") return valid_date(s);
    if (f == "date-time") {
      static const std::regex re(R"(^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$)");
      std::smatch m;
      if (!std::regex_match(s, m, re) || !valid_date(m[1])) return false;
      return std::stoi(m[2]) < 24 && std::stoi(m[3]) < 60 && std::stoi(m[4]) < 60;
    }
    if (f == "uuid") return std::regex_match(s, std::regex(R"(^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$)"));
    if (f == "email")
      return std::regex_match(s, std::regex(R"(^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}$)"));
    return false;
  }

  const boost::json::value& resolve(std::string_view ref) const {
    const boost::json::value* at = &root_;
    std::string_view rest = ref.substr(1);
    while (!rest.empty()) {
      rest.remove_prefix(1);
      const size_t slash = rest.find('/');
      at = &at->as_object().at(rest.substr(0, slash));
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    }
    return *at;
  }

  bool check(const boost::json::value& v, const boost::json::value& schema) const {
    if (schema.is_bool()) return schema.as_bool();
    const auto& s = schema.as_object();
    if (auto* r = s.if_contains("$ref")) return check(v, resolve(r->as_string()));
    if (auto* a = s.if_contains("anyOf")) {
      bool any = false;
      for (const auto& x : a->as_array()) any = any || check(v, x);
      if (!any) return false;
    }
    if (auto* a = s.if_contains("oneOf")) {
      int n = 0;
      for (const auto& x : a->as_array()) n += check(v, x);
      if (n != 1) return false;
    }
    if (auto* a = s.if_contains("allOf"))
      for (const auto& x : a->as_array())
        if (!check(v, x)) return false;
    if (auto* t = s.if_contains("type")) {
      bool ok = false;
      if (t->is_string()) ok = type_is(v, t->as_string());
      else
        for (const auto& x : t->as_array()) ok = ok || type_is(v, x.as_string());
      if (!ok) return false;
    }
    if (auto* c = s.if_contains("const"); c && !equal(*c, v)) return false;
    if (auto* e = s.if_contains("enum")) {
      bool ok = false;
      for (const auto& x : e->as_array()) ok = ok || equal(x, v);
      if (!ok) return false;
    }
    if (v.is_number()) {
      const double x = num(v);
      if (auto* m = s.if_contains("minimum"); m && x < num(*m)) return false;
      if (auto* m = s.if_contains("maximum"); m && x > num(*m)) return false;
      if (auto* m = s.if_contains("exclusiveMinimum"); m && x <= num(*m)) return false;
      if (auto* m = s.if_contains("exclusiveMaximum"); m && x >= num(*m)) return false;
    }
    if (v.is_string()) {
      const std::string str(v.as_string());
      if (auto* m = s.if_contains("minLength"); m && codepoints(str) < size_t(m->as_int64())) return false;
      if (auto* m = s.if_contains("maxLength"); m && codepoints(str) > size_t(m->as_int64())) return false;
      if (auto* p = s.if_contains("pattern");
          p && !std::regex_search(str, std::regex(std::string(p->as_string()), std::regex::ECMAScript)))
        return false;
      if (auto* f = s.if_contains("format"); f && !valid_format(std::string(f->as_string()), str)) return false;
    }
    if (v.is_array()) {
      const auto& a = v.as_array();
      if (auto* m = s.if_contains("minItems"); m && a.size() < size_t(m->as_int64())) return false;
      if (auto* m = s.if_contains("maxItems"); m && a.size() > size_t(m->as_int64())) return false;
      if (auto* it = s.if_contains("items"))
        for (const auto& x : a)
          if (!check(x, *it)) return false;
    }
    if (v.is_object()) {
      const auto& o = v.as_object();
      if (auto* r = s.if_contains("required"))
        for (const auto& k : r->as_array())
          if (!o.contains(k.as_string())) return false;
      const auto* props = s.if_contains("properties");
      for (const auto& kv : o) {
        const boost::json::value* ps = props ? props->as_object().if_contains(kv.key()) : nullptr;
        if (ps) {
          if (!check(kv.value(), *ps)) return false;
        } else if (auto* ap = s.if_contains("additionalProperties")) {
          if (!check(kv.value(), *ap)) return false;
        }
      }
    }
    return true;
  }

  static bool equal(const boost::json::value& a, const boost::json::value& b) {
    if (a.is_number() && b.is_number()) return num(a) == num(b);
    return a == b;
  }

  const boost::json::value& root_;
};

}  // namespace kvgate::testing
