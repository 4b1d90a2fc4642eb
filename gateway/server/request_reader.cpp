// Parser limits, read-error answers and Beast-to-HttpRequest conversion.
#include "gateway/server/request_reader.h"

#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace kvgate::server {

namespace http = boost::beast::http;

void apply_limits(RequestParser& parser, const ServerOptions& options) {
  parser.header_limit(static_cast<std::uint32_t>(std::min<size_t>(options.max_header_bytes, UINT32_MAX)));
  parser.body_limit(options.max_body_bytes);
}

std::optional<Refusal> refusal_for(boost::beast::error_code ec, const ServerOptions& options) {
  if (ec == http::error::header_limit)
    return Refusal{431, "header_too_large",
                   "the request header is over " + std::to_string(options.max_header_bytes) + " bytes"};
  if (ec == http::error::body_limit)
    return Refusal{413, "body_too_large",
                   "the request body is over " + std::to_string(options.max_body_bytes) + " bytes"};
  // end_of_stream and partial_message are EOFs (the client left), not syntax.
  if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message)
    return Refusal{400, "bad_request", "malformed HTTP request: " + ec.message()};
  return std::nullopt;
}

HttpRequest to_http_request(http::request<http::string_body>&& req, bool secure, std::string peer) {
  HttpRequest out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  out.version = static_cast<int>(req.version());
  out.headers.reserve(static_cast<size_t>(std::distance(req.begin(), req.end())));
  for (const auto& field : req) out.headers.push_back({std::string(field.name_string()), std::string(field.value())});
  out.body = std::move(req.body());
  out.secure = secure;
  out.peer = std::move(peer);
  return out;
}

}  // namespace kvgate::server
