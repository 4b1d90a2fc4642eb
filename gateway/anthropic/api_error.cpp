// Anthropic's error shape. Pure; any thread.
#include "gateway/anthropic/api_error.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace kvgate::anthropic {

int error_status(const openai::ApiError& e) { return e.status == 503 ? 529 : e.status; }

std::string_view error_type(const openai::ApiError& e) {
  switch (e.status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503:
    case 529: return "overloaded_error";
    default: return e.status >= 500 ? "api_error" : "invalid_request_error";
  }
}

boost::json::value error_json(const openai::ApiError& e) {
  return {{"type", "error"}, {"error", {{"type", error_type(e)}, {"message", e.message}}}};
}

std::string serialize_error(const openai::ApiError& e) { return boost::json::serialize(error_json(e)); }

}  // namespace kvgate::anthropic
