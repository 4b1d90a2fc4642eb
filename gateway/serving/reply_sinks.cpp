// Invariant: a stream's frames leave in the order they were made: held_
// keeps them until open(), which sends them before any later one.
#include "gateway/serving/reply_sinks.h"

#include <boost/json.hpp>

#include "gateway/openai/completion_response.h"
#include "gateway/server/sse.h"

namespace kvgate::serving {
namespace {

server::HttpHeaders with_json(server::HttpHeaders h) {
  h.push_back({"Content-Type", "application/json"});
  return h;
}

}  // namespace

openai::ApiError failure(const Served& s) {
  return openai::internal_error("The server had an error while processing your request; quote its id, " +
                                s.request_id + ", to the operator.");
}

openai::UsageReport usage_report(const Served& s) {
  openai::UsageReport u;
  u.prompt_tokens = s.usage.prompt_tokens;
  u.completion_tokens = s.usage.output_tokens;
  u.cached_device_tokens = s.usage.cached_device;
  u.cached_host_tokens = s.usage.cached_host;
  u.cached_disk_tokens = s.usage.cached_disk;
  u.fresh_prefill_tokens = s.usage.fresh_prefill;
  u.cache_written_tokens = s.usage.cache_written;
  u.cache_write_5m_tokens = s.usage.cache_write_5m;
  u.cache_write_1h_tokens = s.usage.cache_write_1h;
  u.cost_micros = s.cost_micros;
  u.pin_asked = s.pin_asked;
  u.pinned_tokens = s.pinned_tokens;
  u.pin_refused = s.pin_refused;
  return u;
}

void WholeReply::on_text(std::string_view text) {
  MutexLock lock(mu_);
  text_ += text;
}

namespace {

constexpr const char* kReplicaHeader = "x-kvgate-replica";

}  // namespace

// The last placement wins: a retry before the first token moved it.
void set_replica(server::HttpHeaders& h, std::string_view where) {
  for (auto& [name, value] : h)
    if (name == kReplicaHeader) {
      value = where;
      return;
    }
  h.push_back({kReplicaHeader, std::string(where)});
}

void WholeReply::on_placed(std::string_view where) {
  MutexLock lock(mu_);
  set_replica(headers_, where);
}

void WholeReply::open(server::HttpHeaders more) {
  MutexLock lock(mu_);
  headers_.insert(headers_.end(), more.begin(), more.end());
  open_ = true;
  if (held_) {
    send(std::move(*held_));
    held_.reset();
  }
}

void WholeReply::send(Response r) {
  if (!open_) {
    held_ = std::move(r);
    return;
  }
  reply_.send(r.status, with_json(headers_), std::move(r.body));
}

void WholeReply::on_done(const Served& s) {
  MutexLock lock(mu_);
  send(answer(s, text_));
}

openai::ToolReply WholeReply::read_calls(const std::string& text) const {
  if (!tools_) return {text, {}, false};
  openai::ToolReply r = openai::parse_tool_reply(*tools_, text);
  if (count_) count_(!r.calls.empty() ? "calls" : r.unparsed ? "unparsed" : "text");
  return r;
}

WholeReply::Response WholeReplySink::answer(const Served& s, const std::string& text) const {
  if (!s.error.empty()) {
    const openai::ApiError e = failure(s);
    return {e.status, openai::serialize(e)};
  }
  const openai::UsageReport usage = usage_report(s);
  if (endpoint_ != openai::Endpoint::kChatCompletions)
    return {200, boost::json::serialize(openai::text_completion_response(meta_, text, s.finish, usage))};
  const openai::ToolReply r = read_calls(text);
  return {200, boost::json::serialize(openai::chat_completion_response(meta_, r.content, s.finish, usage, r.calls))};
}

void StreamReply::on_placed(std::string_view where) {
  MutexLock lock(mu_);
  if (!open_) set_replica(headers_, where);  // once open, the header has gone out
}

void StreamReply::open(server::HttpHeaders more) {
  MutexLock lock(mu_);
  server::HttpHeaders h = server::sse_headers();
  h.insert(h.end(), headers_.begin(), headers_.end());
  h.insert(h.end(), more.begin(), more.end());
  reply_.start_stream(200, std::move(h));
  for (std::string& f : opening()) reply_.write(std::move(f));
  for (std::string& f : held_) reply_.write(std::move(f));
  held_.clear();
  open_ = true;
  if (done_) reply_.finish();
}

void StreamReply::send(std::string frame) {
  if (open_)
    reply_.write(std::move(frame));
  else
    held_.push_back(std::move(frame));
}

void StreamReply::send(std::vector<std::string> frames) {
  for (std::string& f : frames) send(std::move(f));
}

void StreamReply::on_text(std::string_view text) {
  MutexLock lock(mu_);
  this->text(text);
}

void StreamReply::on_done(const Served& s) {
  MutexLock lock(mu_);
  done(s);
  done_ = true;
  if (open_) reply_.finish();
}

std::vector<std::string> StreamReplySink::opening() {
  if (endpoint_ != openai::Endpoint::kChatCompletions) return {};
  return {server::sse_data(boost::json::serialize(openai::chat_role_chunk(ctx_)))};
}

void StreamReplySink::text(std::string_view text) {
  if (tools_) return send_step(tools_->push(text));
  const boost::json::value chunk = endpoint_ == openai::Endpoint::kChatCompletions
                                       ? openai::chat_content_chunk(ctx_, text)
                                       : openai::text_chunk(ctx_, text);
  send(server::sse_data(boost::json::serialize(chunk)));
}

void StreamReplySink::send_step(const openai::ToolCallStream::Step& step) {
  if (!step.content.empty()) send(server::sse_data(boost::json::serialize(openai::chat_content_chunk(ctx_, step.content))));
  for (const openai::ToolCall& call : step.calls) {
    for (const boost::json::value& chunk : openai::chat_tool_call_chunks(ctx_, calls_sent_, call))
      send(server::sse_data(boost::json::serialize(chunk)));
    ++calls_sent_;
  }
}

void StreamReplySink::done(const Served& s) {
  if (!s.error.empty()) {
    // A failure mid-stream is an error frame, then the end (OpenAI's shape).
    send(server::sse_data(openai::serialize(failure(s))));
  } else {
    if (tools_) {
      send_step(tools_->finish());
      if (count_) count_(calls_sent_ > 0 ? "calls" : tools_->unparsed() ? "unparsed" : "text");
    }
    const boost::json::value last = endpoint_ != openai::Endpoint::kChatCompletions ? openai::text_chunk(ctx_, "", s.finish)
                                     : calls_sent_ > 0 ? openai::chat_tool_calls_finish_chunk(ctx_)
                                                       : openai::chat_finish_chunk(ctx_, s.finish);
    send(server::sse_data(boost::json::serialize(last)));
    if (ctx_.include_usage)
      send(server::sse_data(boost::json::serialize(openai::usage_chunk(ctx_, endpoint_, usage_report(s)))));
  }
  send(std::string(server::kSseDone));
}

}  // namespace kvgate::serving
