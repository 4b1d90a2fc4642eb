#include "gateway/template/json_value.h"

#include <limits>

namespace kvgate::jinja {

Value from_json(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null: return Value::none();
    case boost::json::kind::bool_: return Value(v.get_bool());
    case boost::json::kind::int64: return Value(v.get_int64());
    case boost::json::kind::uint64:
      if (v.get_uint64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return Value(static_cast<int64_t>(v.get_uint64()));
      return Value(static_cast<double>(v.get_uint64()));
    case boost::json::kind::double_: return Value(v.get_double());
    case boost::json::kind::string: return Value(std::string_view(v.get_string()));
    case boost::json::kind::array: {
      std::vector<Value> items;
      items.reserve(v.get_array().size());
      for (const auto& item : v.get_array()) items.push_back(from_json(item));
      return Value::list(std::move(items));
    }
    case boost::json::kind::object: {
      std::vector<std::pair<std::string, Value>> items;
      items.reserve(v.get_object().size());
      for (const auto& kv : v.get_object()) items.emplace_back(std::string(kv.key()), from_json(kv.value()));
      return Value::dict(std::move(items));
    }
  }
  return Value::none();
}

}  // namespace kvgate::jinja
