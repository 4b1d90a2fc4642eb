// Typed field reads with errors that name the field. Pure; any thread.
#include "gateway/json/field_reader.h"

#include <algorithm>
#include <cmath>
#include <exception>

namespace kvgate::json_fields {
namespace json = boost::json;

namespace {

std::string out_of_range(const std::string& value, int64_t min, int64_t max) {
  return "out of range: " + value + " is not in [" + std::to_string(min) + ", " + std::to_string(max) + "].";
}

}  // namespace

std::string_view json_kind_name(const json::value& v, Convention c) {
  switch (v.kind()) {
    case json::kind::null: return "null";
    case json::kind::bool_: return "a boolean";
    case json::kind::int64:
    case json::kind::uint64: return "an integer";
    case json::kind::double_:
      if (c == Convention::kExact) return "a number with a fraction or exponent";
      return json_integer(v) ? "an integer" : "a number";
    case json::kind::string: return "a string";
    case json::kind::array: return "an array";
    case json::kind::object: return "an object";
  }
  return "a value";
}

std::string index_path(std::string_view base, std::size_t i) {
  return std::string(base) + "[" + std::to_string(i) + "]";
}

std::optional<int64_t> json_integer(const json::value& v, Convention c) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v.get_uint64());
  }
  if (v.is_double() && c == Convention::kApi) {
    const double d = v.get_double();
    // 2^63 itself does not fit: the bound is exclusive.
    if (!std::isfinite(d) || d != std::floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
      return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

FieldReader::FieldReader(const json::object& object, std::string prefix, const FieldErrors& errors,
                         Convention convention)
    : object_(object), prefix_(std::move(prefix)), errors_(errors), convention_(convention) {}

std::string FieldReader::path(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

const json::value* FieldReader::find(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end()) return nullptr;
  asked_.push_back(&*it);
  const json::value& v = it->value();
  return v.is_null() && convention_ == Convention::kApi ? nullptr : &v;
}

const json::value& FieldReader::need(std::string_view key) const {
  const json::value* v = find(key);
  if (!v) missing(path(key));
  return *v;
}

// FieldErrors throw; the calls below are virtual, so the compiler cannot
// see that, and a FieldErrors that returned must not go on to a bad read.
void FieldReader::missing(const std::string& path) const {
  errors_.missing(path);
  std::terminate();
}

void FieldReader::wrong_type(const std::string& path, std::string_view expected, const json::value& v) const {
  errors_.wrong_type(path, expected, json_kind_name(v, convention_));
  std::terminate();
}

void FieldReader::bad_value(const std::string& path, std::string_view why) const {
  errors_.bad_value(path, why);
  std::terminate();
}

bool FieldReader::as_boolean(const json::value& v, const std::string& path) const {
  if (!v.is_bool()) wrong_type(path, "a boolean", v);
  return v.get_bool();
}

double FieldReader::as_number(const json::value& v, const std::string& path) const {
  if (!v.is_number()) wrong_type(path, "a number", v);
  const double d = v.to_number<double>();
  if (!std::isfinite(d)) bad_value(path, "the number is too large.");
  return d;
}

int64_t FieldReader::as_integer(const json::value& v, const std::string& path) const {
  if (!v.is_number()) wrong_type(path, "an integer", v);
  if (auto i = json_integer(v, convention_)) return *i;
  const bool whole = v.is_double() && v.get_double() == std::floor(v.get_double());
  if (v.is_uint64() || (whole && convention_ == Convention::kApi))
    bad_value(path, "the integer does not fit in 64 bits.");
  wrong_type(path, "an integer", v);
}

std::string FieldReader::as_string(const json::value& v, const std::string& path) const {
  if (!v.is_string()) wrong_type(path, "a string", v);
  return std::string(v.get_string());
}

std::optional<bool> FieldReader::boolean(std::string_view key) const {
  const json::value* v = find(key);
  return v ? std::optional(as_boolean(*v, path(key))) : std::nullopt;
}

std::optional<double> FieldReader::number(std::string_view key) const {
  const json::value* v = find(key);
  return v ? std::optional(as_number(*v, path(key))) : std::nullopt;
}

std::optional<int64_t> FieldReader::integer(std::string_view key) const {
  const json::value* v = find(key);
  return v ? std::optional(as_integer(*v, path(key))) : std::nullopt;
}

std::optional<std::string> FieldReader::string(std::string_view key) const {
  const json::value* v = find(key);
  return v ? std::optional(as_string(*v, path(key))) : std::nullopt;
}

std::string FieldReader::required_string(std::string_view key) const {
  std::string s = as_string(need(key), path(key));
  if (s.empty()) bad_value(path(key), "expected a non-empty string.");
  return s;
}

bool FieldReader::need_boolean(std::string_view key) const { return as_boolean(need(key), path(key)); }
double FieldReader::need_number(std::string_view key) const { return as_number(need(key), path(key)); }
std::string FieldReader::need_string(std::string_view key) const { return as_string(need(key), path(key)); }

int64_t FieldReader::integer_in(const json::value& v, const std::string& path, int64_t min, int64_t max) const {
  if (v.is_uint64() && v.get_uint64() > static_cast<uint64_t>(max))
    bad_value(path, out_of_range(std::to_string(v.get_uint64()), min, max));
  const int64_t x = as_integer(v, path);
  if (x < min || x > max) bad_value(path, out_of_range(std::to_string(x), min, max));
  return x;
}

int64_t FieldReader::need_integer(std::string_view key, int64_t min, int64_t max) const {
  return integer_in(need(key), path(key), min, max);
}

uint64_t FieldReader::need_unsigned(std::string_view key) const {
  const json::value& v = need(key);
  if (v.is_uint64()) return v.get_uint64();
  const std::optional<int64_t> x = v.is_number() ? json_integer(v, convention_) : std::nullopt;
  if (!x) wrong_type(path(key), "an unsigned integer", v);
  if (*x < 0) bad_value(path(key), "out of range: " + std::to_string(*x) + " is negative.");
  return static_cast<uint64_t>(*x);
}

FieldReader FieldReader::need_object(std::string_view key) const {
  const json::value& v = need(key);
  if (!v.is_object()) wrong_type(path(key), "an object", v);
  return FieldReader(v.get_object(), path(key), errors_, convention_);
}

void FieldReader::refuse_unread_keys() const {
  for (const json::key_value_pair& kv : object_)
    if (std::find(asked_.begin(), asked_.end(), &kv) == asked_.end()) bad_value(path(kv.key()), "unknown key.");
}

}  // namespace kvgate::json_fields
