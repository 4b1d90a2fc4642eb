// ReplyTarget: what a Reply talks to. A session implements it (posting each
// event to its strand); ReplyRecorder implements it for tests of handlers
// that need no socket. ReplyEvent is one step of a response, in the order
// the Reply accepted them: kSend alone, or kStart, any kWrite, kFinish; or
// kAbort for a stream its Reply dropped unfinished.
//
// Thread ownership: deliver() is called from any thread (whichever thread
// calls the Reply), never concurrently for one Reply (its lock orders the
// calls), and must not block.
#pragma once

#include <cstdint>
#include <string>

#include "gateway/server/http_headers.h"

namespace kvgate::server {

struct ReplyEvent {
  enum class Kind { kSend, kStart, kWrite, kFinish, kAbort };
  Kind kind = Kind::kSend;
  int status = 0;       // kSend, kStart
  HttpHeaders headers;  // kSend, kStart
  std::string body;     // kSend: the whole body; kWrite: one chunk
};

class ReplyTarget {
 public:
  virtual ~ReplyTarget() = default;
  // `exchange` names the request this event answers, so a session can tell
  // a late event for an earlier request from one for the current request.
  virtual void deliver(uint64_t exchange, ReplyEvent event) = 0;
};

}  // namespace kvgate::server
