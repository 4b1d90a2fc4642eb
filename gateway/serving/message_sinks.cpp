// Invariant: a stream's frames leave in the order they were made: held_
// keeps them until open(), which sends message_start, then them.
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

void MessageStreamSink::on_placed(std::string_view where) {
  MutexLock lock(mu_);
  if (!open_) set_replica(headers_, where);  // once open, the header has gone out
}

void MessageStreamSink::open(server::HttpHeaders more) {
  MutexLock lock(mu_);
  server::HttpHeaders h = server::sse_headers();
  h.insert(h.end(), headers_.begin(), headers_.end());
  h.insert(h.end(), more.begin(), more.end());
  reply_.start_stream(200, std::move(h));
  for (std::string& f : events_.start(prompt_tokens_)) reply_.write(std::move(f));
  for (std::string& f : held_) reply_.write(std::move(f));
  held_.clear();
  open_ = true;
  if (done_) reply_.finish();
}

void MessageStreamSink::send(std::vector<std::string> frames) {
  for (std::string& f : frames) {
    if (open_)
      reply_.write(std::move(f));
    else
      held_.push_back(std::move(f));
  }
}

void MessageStreamSink::send_step(const openai::ToolCallStream::Step& step) {
  send(events_.text(step.content));
  for (const openai::ToolCall& call : step.calls) send(events_.call(call));
}

void MessageStreamSink::on_text(std::string_view text) {
  MutexLock lock(mu_);
  if (tools_) return send_step(tools_->push(text));
  send(events_.text(text));
}

void MessageStreamSink::on_done(const Served& s) {
  MutexLock lock(mu_);
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
  done_ = true;
  if (open_) reply_.finish();
}

}  // namespace kvgate::serving
