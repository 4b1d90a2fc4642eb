// libFuzzer target for the server's request reading: arbitrary bytes, fed
// in two pieces, into a request parser under the server's limits; a
// failed parse must map to 400/413/431 or "the client left", and a
// finished one must convert to an HttpRequest whose body respects the
// limit and whose headers the server could echo or refuse without
// splitting a response.
#include <boost/asio/buffer.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "gateway/server/request_reader.h"
#include "gateway/server/sse.h"
#include "gateway/server/wire_format.h"

namespace {

using kvgate::server::RequestParser;

// Feeds `bytes` to the parser as a socket would, in as many put() calls as
// it asks for; false once it fails or wants more than there is.
bool feed(RequestParser& parser, const char* bytes, size_t n, boost::beast::error_code& ec) {
  while (n > 0 && !parser.is_done()) {
    const size_t used = parser.put(boost::asio::buffer(bytes, n), ec);
    if (ec == boost::beast::http::error::need_more) {
      ec = {};
      return false;
    }
    if (ec) return false;
    bytes += used;
    n -= used;
    if (used == 0) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kvgate::server::ServerOptions options;
  options.max_header_bytes = 2048;
  options.max_body_bytes = 4096;
  RequestParser parser;
  kvgate::server::apply_limits(parser, options);
  parser.eager(true);

  const char* bytes = reinterpret_cast<const char*>(data);
  const size_t split = size ? data[0] % (size + 1) : 0;
  boost::beast::error_code ec;
  if (feed(parser, bytes, split, ec)) feed(parser, bytes + split, size - split, ec);
  if (!ec && !parser.is_done()) {
    parser.put_eof(ec);  // the client closes here
  }
  if (ec) {
    const auto refusal = kvgate::server::refusal_for(ec, options);
    if (refusal && refusal->status != 400 && refusal->status != 413 && refusal->status != 431) std::abort();
    return 0;
  }
  if (!parser.is_done()) return 0;

  kvgate::server::HttpRequest req = kvgate::server::to_http_request(parser.release(), true, "127.0.0.1:1");
  if (req.body.size() > options.max_body_bytes) std::abort();
  (void)req.header("content-type");
  (void)req.path();
  // Whatever the client sent, a head built from its headers either passes
  // the checks (and then holds no line break inside a field) or is refused.
  if (kvgate::server::valid_headers(req.headers)) {
    const std::string head =
        kvgate::server::serialize_head(200, req.headers, kvgate::server::Framing::kLength, 0, true, 11);
    size_t lines = 0;
    for (size_t at = head.find("\r\n"); at != std::string::npos; at = head.find("\r\n", at + 2)) ++lines;
    if (head.find('\n') != std::string::npos && lines == 0) std::abort();
  }
  const std::string frame = kvgate::server::sse_data(req.body);
  if (frame.rfind("data: ", 0) != 0 || frame.size() < 2 || frame.substr(frame.size() - 2) != "\n\n") std::abort();
  return 0;
}
