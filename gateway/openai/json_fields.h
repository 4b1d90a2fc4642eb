// Typed reads of a request's JSON fields, each failure a 400 ApiError that
// names the field by its JSON path ("messages[2].content"): the shared
// reader (gateway/json/field_reader.h) under the public API's conventions,
//  - null is the same as absent (OpenAI's SDKs send null for "not given");
//  - an integer may be written as a number with no fraction (16.0), as
//    Python and JavaScript clients sometimes do; anything else is not one;
//  - a field of the wrong JSON type is code invalid_type, never coerced;
// and its errors as OpenAI answers them: missing_required_parameter,
// invalid_type, invalid_value.
//
// Pure; any thread. A FieldReader borrows its object: keep the object alive.
#pragma once

#include <string>

#include <boost/json/object.hpp>

#include "gateway/json/field_reader.h"

namespace kvgate::openai {

using json_fields::index_path;
using json_fields::json_integer;
using json_fields::json_kind_name;

class FieldReader : public json_fields::FieldReader {
 public:
  // `prefix` is the path of `object` itself ("" for the body, "stream_options"...).
  FieldReader(const boost::json::object& object, std::string prefix);
};

}  // namespace kvgate::openai
