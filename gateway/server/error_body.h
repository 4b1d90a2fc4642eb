// The server's own error responses (400, 408, 413, 431, 500, 503) in
// OpenAI's error shape:
//   {"error":{"message":...,"type":...,"param":null,"code":...}}
// A deliberately tiny, private helper: openai/ owns the full error type.
// Pure functions; no state.
#pragma once

#include <string>
#include <string_view>

namespace kvgate::server {

// `type` is "invalid_request_error" for 4xx, "server_error" for 5xx.
std::string error_body(std::string_view message, std::string_view type, std::string_view code);

// The type OpenAI uses for a status: 5xx are server errors.
inline std::string_view error_type_for(int status) {
  return status >= 500 ? "server_error" : "invalid_request_error";
}

}  // namespace kvgate::server
