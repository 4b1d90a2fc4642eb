// Invariant: a stream's frames leave in the order they were made, after
// message_start (StreamReply holds them until open()).
#include "gateway/serving/message_sinks.h"

#include <boost/json.hpp>

#include "gateway/anthropic/api_error.h"
#include "gateway/server/sse.h"

namespace kvgate::serving {

WholeReply::Response MessageWholeSink::answer(const Served& s, const std::string& text) const {
  if (!s.error.empty()) {
    const openai::ApiError e = failure(s);
    return {anthropic::error_status(e), anthropic::serialize_error(e)};
  }
  const openai::ToolReply r = read_calls(text);
  const anthropic::StopReason stop = anthropic::stop_reason(s.finish, s.stop_sequence, !r.calls.empty());
  const boost::json::value body =
      anthropic::message_response(meta_, r.content, r.calls, stop, s.stop_sequence, usage_report(s));
  return {200, boost::json::serialize(body)};
}

std::vector<std::string> MessageStreamSink::opening() { return events_.start(prompt_tokens_); }

void MessageStreamSink::send_step(const openai::ToolCallStream::Step& step) {
  send(events_.text(step.content));
  for (const openai::ToolCall& call : step.calls) send(events_.call(call));
}

void MessageStreamSink::text(std::string_view text) {
  if (tools_) return send_step(tools_->push(text));
  send(events_.text(text));
}

void MessageStreamSink::done(const Served& s) {
  if (!s.error.empty()) {
    send({anthropic::error_frame(failure(s))});
  } else {
    if (tools_) {
      send_step(tools_->finish());
      if (count_) count_(events_.calls() > 0 ? "calls" : tools_->unparsed() ? "unparsed" : "text");
    }
    const anthropic::StopReason stop = anthropic::stop_reason(s.finish, s.stop_sequence, events_.calls() > 0);
    send(events_.finish(stop, s.stop_sequence, usage_report(s)));
  }
}

}  // namespace kvgate::serving
