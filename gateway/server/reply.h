// Reply: how a Handler answers one request, now or later, from any thread.
//
//   send(status, headers, body)       a whole response (Content-Length), or
//   start_stream(status, headers)     a streamed one (chunked; SSE), then
//   write(chunk) ... write(chunk)     any number of pieces, then
//   finish()                          the end of the stream.
//   on_close(fn)                      fn runs once if the client goes away
//                                     (disconnect, write timeout, server
//                                     stop) before the response's last byte
//                                     was written; at once, on the calling
//                                     thread, if it is already gone.
//
// Every method is safe from any thread, concurrently too, and never blocks
// on the network: it takes a short lock and posts the bytes to the
// connection's strand, which appends them to its output buffer. A call out
// of order (write before start_stream, send twice, anything after finish)
// is refused: it returns false and changes nothing. Methods on a Reply
// whose client is gone are accepted and dropped.
//
// Reply is a cheap handle: copies share one response. When the last copy
// is destroyed without a response the client gets a 500 in OpenAI's error
// shape; a stream dropped before finish() is cut off (the connection is
// closed, so the client sees a truncated body rather than a clean end).
//
// The server owns framing: Content-Length, Transfer-Encoding and Connection
// are its own and are dropped from the handler's headers. A header whose
// name is not an RFC 9110 token or whose value holds CR, LF or NUL turns
// the response into a 500 (never sent on). For HEAD requests the body is
// not sent; HTTP/1.0 clients get streams unchunked, ended by the close.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "gateway/server/http_headers.h"
#include "gateway/server/reply_target.h"

namespace kvgate::server {

class ReplyState;

class Reply {
 public:
  // A reply that answers nothing (every call is refused).
  Reply() = default;
  // A reply delivering its events to `target` (a session, or a test's
  // ReplyRecorder) for the request numbered `exchange`.
  Reply(std::weak_ptr<ReplyTarget> target, uint64_t exchange);

  bool send(int status, HttpHeaders headers, std::string body);
  bool start_stream(int status, HttpHeaders headers);
  bool write(std::string chunk);
  bool finish();
  void on_close(std::function<void()> fn);

  // Whether send() or start_stream() was accepted.
  bool responded() const;
  // Whether the client went away before the response was written out.
  bool client_gone() const;

  // For the session that made this reply: its shared state.
  const std::shared_ptr<ReplyState>& state() const { return state_; }

 private:
  std::shared_ptr<ReplyState> state_;
};

}  // namespace kvgate::server
