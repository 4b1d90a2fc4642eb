// SSE framing: "data: " before every line of the payload, a blank line after.
#include "gateway/server/sse.h"

namespace kvgate::server {

HttpHeaders sse_headers() {
  return {{"Content-Type", "text/event-stream"}, {"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}};
}

std::string sse_data(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 8);
  size_t start = 0;
  while (true) {
    size_t end = payload.find_first_of("\r\n", start);
    out += "data: ";
    out += payload.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    out += '\n';
    if (end == std::string_view::npos) break;
    // CRLF, LF and CR each end one line.
    start = end + 1;
    if (payload[end] == '\r' && start < payload.size() && payload[start] == '\n') ++start;
    if (start == payload.size()) break;
  }
  out += '\n';
  return out;
}

}  // namespace kvgate::server
