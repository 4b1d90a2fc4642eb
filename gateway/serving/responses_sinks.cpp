// Invariant: a stream's frames leave in the order they were made, which is
// their sequence_number order (StreamReply holds them until open(), the
// start events first).
#include "gateway/serving/responses_sinks.h"

#include <cstdio>

#include <boost/json.hpp>

#include "gateway/server/sse.h"
#include "gateway/serving/response_chain.h"
#include "tenancy/error.h"

namespace kvgate::serving {

void ResponseKeeper::keep(const openai::ResponseSettings& s, const std::string& text, const Tokens& output,
                          const boost::json::object& object) const {
  if (!store_) return;
  tenancy::StoredResponse r{s.id, s.previous_response_id, s.created_at * int64_t{1'000'000'000}, input_, text,
                            boost::json::serialize(object), encode_output_tokens(output)};
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
  keeper_.keep(settings_, text, s.output, body);
  return {200, boost::json::serialize(body)};
}

// The start events are made first, held until open(): each event's
// sequence number is its place in the stream.
ResponseStreamSink::ResponseStreamSink(server::Reply reply, openai::ResponseSettings settings, ResponseKeeper keeper,
                                       server::HttpHeaders headers)
    : StreamReply(std::move(reply), std::move(headers)), keeper_(std::move(keeper)), events_(std::move(settings)) {
  MutexLock lock(mu_);
  send(events_.start());
}

void ResponseStreamSink::text(std::string_view text) { send(events_.text(text)); }

void ResponseStreamSink::done(const Served& s) {
  if (!s.error.empty()) {
    send({events_.failed(failure(s))});
    return;
  }
  const openai::UsageReport usage = usage_report(s);
  const openai::ResponseStatus status = openai::finished_status(s.finish);
  keeper_.keep(events_.settings(), events_.text_so_far(), s.output,
               openai::response_object(events_.settings(), status, events_.text_so_far(), &usage));
  send(events_.finish(status, usage));
}

}  // namespace kvgate::serving
