// Typed reads of a request's JSON fields, each failure a 400 ApiError that
// names the field by its JSON path ("messages[2].content").
//
// The API's conventions, kept in one place:
//  - null is the same as absent (OpenAI's SDKs send null for "not given");
//  - an integer may be written as a number with no fraction (16.0), as
//    Python and JavaScript clients sometimes do; anything else is not one;
//  - a field of the wrong JSON type is code invalid_type, never coerced.
//
// Pure; any thread. A FieldReader borrows its object: keep the object alive.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace kvgate::openai {

// "a string", "an integer", "a number", "a boolean", "an array", "an object", "null".
std::string_view json_kind_name(const boost::json::value& v);

// The value as an integer if it is one (see above), else nullopt.
std::optional<int64_t> json_integer(const boost::json::value& v);

// The JSON path of element i of the array at `base`: "messages[2]".
std::string index_path(std::string_view base, std::size_t i);

class FieldReader {
 public:
  // `prefix` is the path of `object` itself ("" for the body, "stream_options"...).
  FieldReader(const boost::json::object& object, std::string prefix);

  // The field's JSON path: prefix.key, or key at the top.
  std::string path(std::string_view key) const;
  // The field's value, or nullptr when absent or null.
  const boost::json::value* find(std::string_view key) const;

  std::optional<bool> boolean(std::string_view key) const;
  std::optional<double> number(std::string_view key) const;  // finite only
  std::optional<int64_t> integer(std::string_view key) const;
  std::optional<std::string> string(std::string_view key) const;
  // A string that must be present and non-empty (missing_required_parameter).
  std::string required_string(std::string_view key) const;

 private:
  const boost::json::object& object_;
  std::string prefix_;
};

}  // namespace kvgate::openai
