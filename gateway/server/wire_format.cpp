// Response serialization. Kept free of Beast so it can be read top to bottom
// and tested byte for byte.
#include "gateway/server/wire_format.h"

#include <cstdio>

namespace kvgate::server {

bool is_token(std::string_view name) {
  if (name.empty()) return false;
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  for (char c : name) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && kSpecials.find(c) == std::string_view::npos) return false;
  }
  return true;
}

bool is_field_value(std::string_view value) {
  for (char c : value)
    if (c == '\r' || c == '\n' || c == '\0') return false;
  return true;
}

bool valid_headers(const HttpHeaders& headers) {
  for (const HttpHeader& h : headers)
    if (!is_token(h.name) || !is_field_value(h.value)) return false;
  return true;
}

bool server_owned_header(std::string_view name) {
  return iequals(name, "content-length") || iequals(name, "transfer-encoding") || iequals(name, "connection") ||
         iequals(name, "keep-alive");
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: break;
  }
  if (status >= 200 && status < 300) return "OK";
  if (status >= 400 && status < 500) return "Client Error";
  return "Server Error";
}

std::string serialize_head(int status, const HttpHeaders& headers, Framing framing, size_t content_length,
                           bool keep_alive, int request_version) {
  std::string out;
  out.reserve(128 + headers.size() * 48);
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += reason_phrase(status);
  out += "\r\n";
  for (const HttpHeader& h : headers) {
    if (server_owned_header(h.name)) continue;
    out += h.name;
    out += ": ";
    out += h.value;
    out += "\r\n";
  }
  switch (framing) {
    case Framing::kLength:
      out += "Content-Length: ";
      out += std::to_string(content_length);
      out += "\r\n";
      break;
    case Framing::kChunked: out += "Transfer-Encoding: chunked\r\n"; break;
    case Framing::kUntilClose:
    case Framing::kNone: break;
  }
  if (!keep_alive) out += "Connection: close\r\n";
  else if (request_version < 11) out += "Connection: keep-alive\r\n";
  out += "\r\n";
  return out;
}

std::string chunk(std::string_view data) {
  char size[24];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out;
  out.reserve(static_cast<size_t>(n) + data.size() + 2);
  out.append(size, static_cast<size_t>(n));
  out += data;
  out += "\r\n";
  return out;
}

}  // namespace kvgate::server
