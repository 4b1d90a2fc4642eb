// Typed field reads with errors that name the field. Pure; any thread.
#include "gateway/openai/json_fields.h"

#include <cmath>

#include "gateway/openai/api_error.h"

namespace kvgate::openai {
namespace json = boost::json;

std::string_view json_kind_name(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_: return json_integer(v) ? "an integer" : "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

std::string index_path(std::string_view base, std::size_t i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}

std::optional<int64_t> json_integer(const json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v.get_uint64());
  }
  if (v.is_double()) {
    const double d = v.get_double();
    // 2^63 itself does not fit: the bound is exclusive.
    if (!std::isfinite(d) || d != std::floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
      return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

FieldReader::FieldReader(const json::object& object, std::string prefix)
    : object_(object), prefix_(std::move(prefix)) {}

std::string FieldReader::path(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

const json::value* FieldReader::find(std::string_view key) const {
  const json::value* v = object_.if_contains(key);
  return v && !v->is_null() ? v : nullptr;
}

std::optional<bool> FieldReader::boolean(std::string_view key) const {
  const json::value* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_bool()) throw invalid_type(path(key), "a boolean", json_kind_name(*v));
  return v->get_bool();
}

std::optional<double> FieldReader::number(std::string_view key) const {
  const json::value* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw invalid_type(path(key), "a number", json_kind_name(*v));
  const double d = v->to_number<double>();
  if (!std::isfinite(d)) throw invalid_value(path(key), "the number is too large.");
  return d;
}

std::optional<int64_t> FieldReader::integer(std::string_view key) const {
  const json::value* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw invalid_type(path(key), "an integer", json_kind_name(*v));
  auto i = json_integer(*v);
  if (!i) {
    if (v->is_uint64() || (v->is_double() && v->get_double() == std::floor(v->get_double())))
      throw invalid_value(path(key), "the integer does not fit in 64 bits.");
    throw invalid_type(path(key), "an integer", json_kind_name(*v));
  }
  return i;
}

std::optional<std::string> FieldReader::string(std::string_view key) const {
  const json::value* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw invalid_type(path(key), "a string", json_kind_name(*v));
  return std::string(v->get_string());
}

std::string FieldReader::required_string(std::string_view key) const {
  auto s = string(key);
  if (!s) throw missing_parameter(path(key));
  if (s->empty()) throw invalid_value(path(key), "expected a non-empty string.");
  return std::move(*s);
}

}  // namespace kvgate::openai
