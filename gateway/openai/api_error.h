// ApiError: an HTTP status and the error object the OpenAI API answers with,
//   {"error": {"message": "...", "type": "...", "param": ..., "code": ...}}
// (param and code are null when absent), and the helpers for the errors the
// gateway gives. It is also the one exception type request parsing throws,
// so a caller catches one thing and answers it as it is.
//
// Types follow OpenAI's: invalid_request_error for a 4xx the client can fix
// (OpenAI uses it for 404 model_not_found and 405/413 too),
// authentication_error 401, permission_error 403, not_found_error 404 for a
// missing resource that is not a model or route, rate_limit_error 429,
// server_error 5xx. Codes are OpenAI's where it has one (invalid_type,
// invalid_value, missing_required_parameter, empty_array, invalid_api_key,
// model_not_found, context_length_exceeded, rate_limit_exceeded) and
// kvgate's own otherwise; docs/gateway.md lists them all.
//
// Pure values: any thread.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

namespace kvgate::openai {

class ApiError : public std::exception {
 public:
  ApiError(int status_, std::string message_, std::string type_, std::optional<std::string> param_ = std::nullopt,
           std::optional<std::string> code_ = std::nullopt)
      : status(status_),
        message(std::move(message_)),
        type(std::move(type_)),
        param(std::move(param_)),
        code(std::move(code_)) {}

  const char* what() const noexcept override { return message.c_str(); }
  friend bool operator==(const ApiError& a, const ApiError& b) {
    return a.status == b.status && a.message == b.message && a.type == b.type && a.param == b.param &&
           a.code == b.code;
  }

  int status;
  std::string message;
  std::string type;
  std::optional<std::string> param;
  std::optional<std::string> code;
};

// {"error": {"message", "type", "param", "code"}}: the body of an error
// response and, as it is, a mid-stream SSE error frame's data.
boost::json::value to_json(const ApiError& e);
std::string serialize(const ApiError& e);

// 400s from request validation, each naming the parameter (a JSON path such
// as "messages[1].content[0].text").
ApiError invalid_request(std::string message, std::optional<std::string> param = std::nullopt,
                         std::optional<std::string> code = std::nullopt);
// "Invalid type for 'temperature': expected a number, but got a string instead."
ApiError invalid_type(std::string_view param, std::string_view expected, std::string_view got);
// "Invalid value for 'n': ..." with code invalid_value.
ApiError invalid_value(std::string_view param, std::string_view why);
ApiError missing_parameter(std::string_view param);
// The body was not JSON; `where` says where the parser stopped.
ApiError invalid_json(std::string_view why, std::string_view where);
// Prompt plus max_tokens past the model's context (400, as OpenAI answers);
// `param` is "messages" for chat, "prompt" for completions.
ApiError context_length_exceeded(long long context, long long prompt_tokens, long long max_tokens,
                                 std::string param = "messages");

ApiError invalid_api_key();                               // 401
ApiError permission_denied(std::string message);          // 403
ApiError model_not_found(std::string_view model);         // 404
ApiError route_not_found(std::string_view method, std::string_view path);  // 404
ApiError not_found(std::string message);                  // 404, not_found_error
ApiError method_not_allowed(std::string_view method, std::string_view path);  // 405
ApiError request_timeout();                               // 408
ApiError body_too_large(long long limit_bytes);           // 413
ApiError unprocessable(std::string message, std::optional<std::string> param = std::nullopt);  // 422
ApiError rate_limited(std::string message);               // 429
ApiError headers_too_large(long long limit_bytes);        // 431
ApiError internal_error(std::string message = "The server had an error while processing your request.");  // 500
ApiError overloaded(std::string message = "The server is overloaded; retry after the time in the retry-after header.");  // 503
ApiError service_unavailable(std::string message);        // 503, code service_unavailable

}  // namespace kvgate::openai
