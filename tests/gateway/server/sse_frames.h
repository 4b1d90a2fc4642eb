// A recorded stream read as an SSE client reads it (server/sse.h): the
// payload of each "data:" event, in order, and whether every write was
// exactly one whole single-line event, "data: <payload>\n\n".
#pragma once

#include <string>
#include <vector>

#include "gateway/server/reply_target.h"

namespace kvgate::server::testing {

struct SseFrames {
  std::vector<std::string> data;
  bool well_formed = true;
};

inline SseFrames sse_frames(const std::vector<ReplyEvent>& events) {
  SseFrames f;
  for (const ReplyEvent& e : events) {
    if (e.kind != ReplyEvent::Kind::kWrite) continue;
    const bool framed =
        e.body.starts_with("data: ") && e.body.ends_with("\n\n") && e.body.find('\n') == e.body.size() - 2;
    f.well_formed = f.well_formed && framed;
    f.data.push_back(framed ? e.body.substr(6, e.body.size() - 8) : e.body);
  }
  return f;
}

}  // namespace kvgate::server::testing
