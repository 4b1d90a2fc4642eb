// Invariant: a stream's frames leave in the order they were made, which is
// their sequence_number order: held_ keeps them (the start events first)
// until open().
#include "gateway/serving/responses_sinks.h"

#include <cstdio>

#include <boost/json.hpp>

#include "gateway/server/sse.h"
#include "tenancy/error.h"

namespace kvgate::serving {

void ResponseKeeper::keep(const openai::ResponseSettings& s, const std::string& text,
                          const boost::json::object& object) const {
  if (!store_) return;
  tenancy::StoredResponse r{s.id, s.previous_response_id, s.created_at * int64_t{1'000'000'000}, input_, text,
                            boost::json::serialize(object)};
  try {
    store_->put(tenant_, r);
  } catch (const tenancy::Error& e) {
    std::fprintf(stderr, "kvgate: response %s was not stored: %s\n", s.id.c_str(), e.what());
  }
}

WholeReply::Response ResponseWholeSink::answer(const Served& s, const std::string& text) const {
  if (!s.error.empty()) {
    const openai::ApiError e = failure(s);
    return {e.status, openai::serialize(e)};
  }
  const openai::UsageReport usage = usage_report(s);
  const boost::json::object body =
      openai::response_object(settings_, openai::finished_status(s.finish), text, &usage);
  keeper_.keep(settings_, text, body);
  return {200, boost::json::serialize(body)};
}

ResponseStreamSink::ResponseStreamSink(server::Reply reply, openai::ResponseSettings settings, ResponseKeeper keeper,
                                       server::HttpHeaders headers)
    : reply_(std::move(reply)), keeper_(std::move(keeper)), headers_(std::move(headers)), events_(std::move(settings)) {
  MutexLock lock(mu_);
  held_ = events_.start();
}

void ResponseStreamSink::on_placed(std::string_view where) {
  MutexLock lock(mu_);
  if (!open_) set_replica(headers_, where);  // once open, the header has gone out
}

void ResponseStreamSink::open(server::HttpHeaders more) {
  MutexLock lock(mu_);
  server::HttpHeaders h = server::sse_headers();
  h.insert(h.end(), headers_.begin(), headers_.end());
  h.insert(h.end(), more.begin(), more.end());
  reply_.start_stream(200, std::move(h));
  for (std::string& f : held_) reply_.write(std::move(f));
  held_.clear();
  open_ = true;
  if (done_) reply_.finish();
}

void ResponseStreamSink::send(std::vector<std::string> frames) {
  for (std::string& f : frames) {
    if (open_)
      reply_.write(std::move(f));
    else
      held_.push_back(std::move(f));
  }
}

void ResponseStreamSink::on_text(std::string_view text) {
  MutexLock lock(mu_);
  send(events_.text(text));
}

void ResponseStreamSink::on_done(const Served& s) {
  MutexLock lock(mu_);
  if (!s.error.empty()) {
    send({events_.failed(failure(s))});
  } else {
    const openai::UsageReport usage = usage_report(s);
    const openai::ResponseStatus status = openai::finished_status(s.finish);
    keeper_.keep(events_.settings(), events_.text_so_far(),
                 openai::response_object(events_.settings(), status, events_.text_so_far(), &usage));
    send(events_.finish(status, usage));
  }
  done_ = true;
  if (open_) reply_.finish();
}

}  // namespace kvgate::serving
