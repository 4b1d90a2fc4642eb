// The OpenAI error shape and the gateway's errors. Pure; any thread.
#include "gateway/openai/api_error.h"

#include <boost/json/serialize.hpp>

namespace kvgate::openai {
namespace json = boost::json;

namespace {

constexpr const char* kInvalidRequest = "invalid_request_error";

// Built by append: gcc 12 warns falsely (-Wrestrict) on "'" + std::string(s).
std::string quoted(std::string_view s) {
  std::string q;
  q.reserve(s.size() + 2);
  q.append(1, '\'').append(s).append(1, '\'');
  return q;
}

}  // namespace

json::value to_json(const ApiError& e) {
  json::object inner;
  inner["message"] = e.message;
  inner["type"] = e.type;
  inner["param"] = e.param ? json::value(*e.param) : json::value(nullptr);
  inner["code"] = e.code ? json::value(*e.code) : json::value(nullptr);
  json::object outer;
  outer["error"] = std::move(inner);
  return outer;
}

std::string serialize(const ApiError& e) { return json::serialize(to_json(e)); }

ApiError invalid_request(std::string message, std::optional<std::string> param, std::optional<std::string> code) {
  return ApiError(400, std::move(message), kInvalidRequest, std::move(param), std::move(code));
}

ApiError invalid_type(std::string_view param, std::string_view expected, std::string_view got) {
  return invalid_request("Invalid type for " + quoted(param) + ": expected " + std::string(expected) +
                             ", but got " + std::string(got) + " instead.",
                         std::string(param), "invalid_type");
}

ApiError invalid_value(std::string_view param, std::string_view why) {
  return invalid_request("Invalid value for " + quoted(param) + ": " + std::string(why), std::string(param),
                         "invalid_value");
}

ApiError missing_parameter(std::string_view param) {
  return invalid_request("Missing required parameter: " + quoted(param) + ".", std::string(param),
                         "missing_required_parameter");
}

ApiError invalid_json(std::string_view why, std::string_view where) {
  return invalid_request("We could not parse the JSON body of your request: " + std::string(why) + " at " +
                             std::string(where) + ". The body must be a JSON object.",
                         std::nullopt, "invalid_json");
}

ApiError context_length_exceeded(long long context, long long prompt_tokens, long long max_tokens, std::string param) {
  return invalid_request("This model's maximum context length is " + std::to_string(context) +
                             " tokens. However, you requested " + std::to_string(prompt_tokens + max_tokens) +
                             " tokens (" + std::to_string(prompt_tokens) + " in the " + param + ", " +
                             std::to_string(max_tokens) + " in the completion). Please reduce the length of the " +
                             param + " or completion.",
                         param, "context_length_exceeded");
}

ApiError invalid_api_key() {
  return ApiError(401, "Incorrect API key provided. You can find your API key with your kvgate operator.",
                  "authentication_error", std::nullopt, "invalid_api_key");
}

ApiError permission_denied(std::string message) {
  return ApiError(403, std::move(message), "permission_error", std::nullopt, "permission_denied");
}

ApiError model_not_found(std::string_view model) {
  return ApiError(404, "The model '" + std::string(model) + "' does not exist or you do not have access to it.",
                  kInvalidRequest, "model", "model_not_found");
}

ApiError route_not_found(std::string_view method, std::string_view path) {
  return ApiError(404, "Invalid URL (" + std::string(method) + " " + std::string(path) + ")", kInvalidRequest,
                  std::nullopt, "unknown_url");
}

ApiError not_found(std::string message) {
  return ApiError(404, std::move(message), "not_found_error", std::nullopt, "not_found");
}

ApiError method_not_allowed(std::string_view method, std::string_view path) {
  return ApiError(405, "Method " + std::string(method) + " is not allowed for " + std::string(path) + ".",
                  kInvalidRequest, std::nullopt, "method_not_allowed");
}

ApiError request_timeout() {
  return ApiError(408, "The request was not received in time.", kInvalidRequest, std::nullopt, "request_timeout");
}

ApiError body_too_large(long long limit_bytes) {
  return ApiError(413, "The request body is larger than the limit of " + std::to_string(limit_bytes) + " bytes.",
                  kInvalidRequest, std::nullopt, "body_too_large");
}

ApiError unprocessable(std::string message, std::optional<std::string> param) {
  return ApiError(422, std::move(message), kInvalidRequest, std::move(param), "unprocessable_entity");
}

ApiError rate_limited(std::string message) {
  return ApiError(429, std::move(message), "rate_limit_error", std::nullopt, "rate_limit_exceeded");
}

ApiError headers_too_large(long long limit_bytes) {
  return ApiError(431, "The request headers are larger than the limit of " + std::to_string(limit_bytes) + " bytes.",
                  kInvalidRequest, std::nullopt, "header_too_large");
}

ApiError internal_error(std::string message) {
  return ApiError(500, std::move(message), "server_error", std::nullopt, "internal_error");
}

ApiError overloaded(std::string message) {
  return ApiError(503, std::move(message), "server_error", std::nullopt, "overloaded");
}

ApiError service_unavailable(std::string message) {
  return ApiError(503, std::move(message), "server_error", std::nullopt, "service_unavailable");
}

}  // namespace kvgate::openai
