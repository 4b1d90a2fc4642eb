// JSON (Boost.JSON, as the API's request parser holds it) as template
// values: objects become dicts in their key order, integers stay integers,
// so `tojson` writes back what the client sent.
#pragma once

#include <boost/json/value.hpp>

#include "gateway/template/value.h"

namespace kvgate::jinja {

Value from_json(const boost::json::value& v);

}  // namespace kvgate::jinja
