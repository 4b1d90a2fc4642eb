// OpenAI's error shape, serialized by Boost.JSON (so any message is escaped).
#include "gateway/server/error_body.h"

#include <boost/json.hpp>

namespace kvgate::server {

std::string error_body(std::string_view message, std::string_view type, std::string_view code) {
  boost::json::object error;
  error["message"] = message;
  error["type"] = type;
  error["param"] = nullptr;
  error["code"] = code;
  boost::json::object root;
  root["error"] = std::move(error);
  return boost::json::serialize(root);
}

}  // namespace kvgate::server
