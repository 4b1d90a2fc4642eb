// Anthropic's error shape for the errors the gateway raises as
// openai::ApiError (the one exception type request parsing throws, so both
// APIs share the parsers and the pipeline's refusals):
//   {"type": "error", "error": {"type": "...", "message": "..."}}
// The message names the field (Anthropic's shape has no `param`); the type
// and status follow Anthropic's table:
//   400 invalid_request_error   401 authentication_error   403 permission_error
//   404 not_found_error         413 request_too_large      429 rate_limit_error
//   500 api_error               529 overloaded_error (kvgate's 503: the engine is full)
// Another 4xx (405, 408, 422, 431) keeps its status as an
// invalid_request_error, another 5xx is an api_error.
//
// Pure; any thread.
#pragma once

#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "gateway/openai/api_error.h"

namespace kvgate::anthropic {

// The HTTP status Anthropic answers `e` with (503 becomes 529).
int error_status(const openai::ApiError& e);
// "invalid_request_error", "overloaded_error", ...
std::string_view error_type(const openai::ApiError& e);
// {"type": "error", "error": {"type", "message"}}: a response's body and,
// as it is, the data of a stream's `error` event.
boost::json::value error_json(const openai::ApiError& e);
std::string serialize_error(const openai::ApiError& e);

}  // namespace kvgate::anthropic
