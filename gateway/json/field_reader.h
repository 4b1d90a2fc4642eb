// Typed reads of a JSON object's fields, each failure naming the field by
// its JSON path ("messages[2].content", "sampling.top_k"). One reader for
// every JSON that kvgate takes in: the public APIs' requests (openai/,
// admin/) and the cluster's wire between a front and its replicas
// (cluster/wire/). What an integer, a number or a string is, and how a
// field is named, is decided here once; each caller brings the error type
// its own protocol answers with (FieldErrors) and one of two conventions:
//
//  - kApi, what clients send: null is the same as absent (OpenAI's SDKs send
//    null for "not given"); an integer may be written as a number with no
//    fraction (16.0), as Python and JavaScript clients sometimes do.
//  - kExact, kvgate to kvgate (one build at both ends, so anything else is
//    a bug): null is a value, of the wrong type for every field; an integer
//    is written as one; refuse_unread_keys() refuses a key no read asked for.
//
// Under both, a field of the wrong JSON type is refused, never coerced.
//
// Pure; any thread. A FieldReader borrows its object and its errors: keep
// them alive. It remembers the keys it was asked for, so one thread uses it
// at a time (a reader is made per object, on the thread that parses it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

namespace kvgate::json_fields {

enum class Convention { kApi, kExact };

// Throws the caller's error for a bad field at `path`; never returns.
class FieldErrors {
 public:
  virtual ~FieldErrors() = default;
  // Absent (or null, under kApi) where a value must be.
  [[noreturn]] virtual void missing(const std::string& path) const = 0;
  // Both are phrases: "an integer", "a string or an array of strings".
  [[noreturn]] virtual void wrong_type(const std::string& path, std::string_view expected,
                                       std::string_view got) const = 0;
  // The type is right, the value is not; `why` is a sentence.
  [[noreturn]] virtual void bad_value(const std::string& path, std::string_view why) const = 0;
};

// "a string", "an integer", "a number", "a boolean", "an array", "an object",
// "null"; a double is "a number with a fraction or exponent" under kExact.
std::string_view json_kind_name(const boost::json::value& v, Convention c = Convention::kApi);

// The value as an integer if it is one under `c`, else nullopt.
std::optional<int64_t> json_integer(const boost::json::value& v, Convention c = Convention::kApi);

// The JSON path of element i of the array at `base`: "messages[2]".
std::string index_path(std::string_view base, std::size_t i);

class FieldReader {
 public:
  // `prefix` is the path of `object` itself ("" for the body, "stream_options"...).
  FieldReader(const boost::json::object& object, std::string prefix, const FieldErrors& errors,
              Convention convention = Convention::kApi);

  // The field's JSON path: prefix.key, or key at the top.
  std::string path(std::string_view key) const;
  // The field's value, or nullptr when absent (or null, under kApi).
  const boost::json::value* find(std::string_view key) const;
  // The field's value; missing() when find() has none.
  const boost::json::value& need(std::string_view key) const;

  // Reads of a field that may be absent: nullopt when find() has none.
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<double> number(std::string_view key) const;  // finite only
  std::optional<int64_t> integer(std::string_view key) const;
  std::optional<std::string> string(std::string_view key) const;
  // A string that must be present and non-empty.
  std::string required_string(std::string_view key) const;

  // Reads of a field that must be present.
  bool need_boolean(std::string_view key) const;
  double need_number(std::string_view key) const;  // finite only
  std::string need_string(std::string_view key) const;  // may be empty
  int64_t need_integer(std::string_view key, int64_t min, int64_t max) const;  // in [min, max]
  uint64_t need_unsigned(std::string_view key) const;
  // A reader of the object at `key`, with this one's errors and convention.
  FieldReader need_object(std::string_view key) const;

  // Any value at `path` (an array's element) as an integer in [min, max].
  int64_t integer_in(const boost::json::value& v, const std::string& path, int64_t min, int64_t max) const;

  // A key of the object that no read asked for is bad_value("unknown key."):
  // call once every field the caller knows was read.
  void refuse_unread_keys() const;

 private:
  [[noreturn]] void missing(const std::string& path) const;
  [[noreturn]] void wrong_type(const std::string& path, std::string_view expected, const boost::json::value& v) const;
  [[noreturn]] void bad_value(const std::string& path, std::string_view why) const;
  // The value at `path` as the type, or the error that says why not.
  bool as_boolean(const boost::json::value& v, const std::string& path) const;
  double as_number(const boost::json::value& v, const std::string& path) const;
  int64_t as_integer(const boost::json::value& v, const std::string& path) const;
  std::string as_string(const boost::json::value& v, const std::string& path) const;

  const boost::json::object& object_;
  std::string prefix_;
  const FieldErrors& errors_;
  Convention convention_;
  mutable std::vector<const boost::json::key_value_pair*> asked_;  // the fields find() was asked for and found
};

}  // namespace kvgate::json_fields
