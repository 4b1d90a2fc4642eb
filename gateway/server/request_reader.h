// How a session reads one request with Beast: the parser's limits, the
// answer a failed read gets (431, 413, 400, or none: the client left), and
// the HttpRequest a finished parse becomes. Pulled out of the session so
// unit tests and the http_request fuzz target run exactly this code.
// Pure functions; no state.
#pragma once

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <optional>
#include <string>

#include "gateway/server/http_request.h"
#include "gateway/server/server_options.h"

namespace kvgate::server {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

void apply_limits(RequestParser& parser, const ServerOptions& options);

// The server's answer to a read that failed with `ec`.
struct Refusal {
  int status;
  const char* code;
  std::string message;
};
// 431 and 413 for the limits, 400 for malformed HTTP; nothing when the
// client went away (EOF, reset, TLS truncation): there is no one to answer.
std::optional<Refusal> refusal_for(boost::beast::error_code ec, const ServerOptions& options);

HttpRequest to_http_request(boost::beast::http::request<boost::beast::http::string_body>&& req, bool secure,
                            std::string peer);

}  // namespace kvgate::server
