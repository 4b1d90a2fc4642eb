// The bytes of a response on the wire: the status line and header block,
// chunks of a chunked body, and the checks that keep a handler's header
// from splitting a response (no CR/LF/NUL in values, token names).
// Pure functions; no state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gateway/server/http_headers.h"

namespace kvgate::server {

// How the body of a response is delimited.
enum class Framing {
  kLength,      // Content-Length: n (also for HEAD, where no body follows)
  kChunked,     // Transfer-Encoding: chunked (HTTP/1.1 streams)
  kUntilClose,  // the close ends it (HTTP/1.0 streams)
  kNone,        // 1xx, 204, 304: no body and no length
};

// "HTTP/1.1 <status> <reason>\r\n", the handler's headers (those the server
// owns dropped), the framing header, "Connection: close" when the
// connection ends after this response (or "keep-alive" for an HTTP/1.0
// client that keeps it), "\r\n". Headers must have passed valid_headers().
std::string serialize_head(int status, const HttpHeaders& headers, Framing framing, size_t content_length,
                           bool keep_alive, int request_version);

// One chunk of a chunked body: "<hex size>\r\n<data>\r\n". Empty data would
// end the body, so callers never pass it.
std::string chunk(std::string_view data);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";
inline constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

bool is_token(std::string_view name);
bool is_field_value(std::string_view value);
bool valid_headers(const HttpHeaders& headers);
// Content-Length, Transfer-Encoding, Connection, Keep-Alive: set by the
// server only.
bool server_owned_header(std::string_view name);

std::string_view reason_phrase(int status);
// A final status a handler may answer with (200..599).
inline bool valid_final_status(int status) { return status >= 200 && status <= 599; }
// Whether a response with this status carries a body at all.
inline bool status_has_body(int status) { return status >= 200 && status != 204 && status != 304; }

}  // namespace kvgate::server
