// Server-sent events (text/event-stream), as OpenAI streams completions:
// each event is "data: <json>\n\n" and the stream ends with
// "data: [DONE]\n\n". A payload holding newlines becomes one "data:" line
// per line, as the SSE grammar requires (a client joins them with "\n").
// Use: reply.start_stream(200, sse_headers()); reply.write(sse_data(json));
// ...; reply.write(std::string(kSseDone)); reply.finish();
// Pure functions; no state.
#pragma once

#include <string>
#include <string_view>

#include "gateway/server/http_headers.h"

namespace kvgate::server {

// Content-Type: text/event-stream, Cache-Control: no-cache, and
// X-Accel-Buffering: no (so a proxy in front does not hold tokens back).
HttpHeaders sse_headers();

std::string sse_data(std::string_view payload);

inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace kvgate::server
