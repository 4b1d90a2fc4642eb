// A streamed completion over HttpExchange, its chunks timed on arrival.
#include "gateway/tools/loadgen/completion_call.h"

#include <memory>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>

#include "gateway/client/http_exchange.h"

namespace kvgate::loadgen {
namespace json = boost::json;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The message of an OpenAI error body, or the body's start.
std::string error_message(const std::string& body) {
  json::error_code ec;
  const json::value v = json::parse(body, ec);
  if (!ec && v.is_object())
    if (const json::value* e = v.get_object().if_contains("error"); e && e->is_object())
      if (const json::value* m = e->get_object().if_contains("message"); m && m->is_string())
        return std::string(m->get_string());
  return body.substr(0, 200);
}

// What one streaming response has shown so far.
struct StreamState {
  RequestOutcome outcome;
  Clock::time_point run_start;
  std::function<void(RequestOutcome)> done;
  int status = 0;
  std::string error_body;  // a non-200 answer's body, kept short
  SseSplitter sse;
  std::vector<std::string> events;
  bool saw_done = false;
};

void on_bytes(StreamState& s, std::string_view bytes) {
  if (s.status != 200) {
    if (s.error_body.size() < 2048) s.error_body.append(bytes.substr(0, 2048 - s.error_body.size()));
    return;
  }
  const double now = seconds_since(s.run_start);
  s.events.clear();
  s.sse.feed(bytes, s.events);
  for (const std::string& data : s.events) {
    const StreamFrame f = read_stream_frame(data);
    switch (f.kind) {
      case StreamFrame::Kind::kDone: s.saw_done = true; break;
      case StreamFrame::Kind::kError:
        if (s.outcome.failure.empty()) {
          s.outcome.failure = "error frame";
          s.outcome.error = f.message;
        }
        break;
      case StreamFrame::Kind::kMalformed:
        if (s.outcome.failure.empty()) {
          s.outcome.failure = "malformed stream";
          s.outcome.error = f.message;
        }
        break;
      case StreamFrame::Kind::kChunk:
        if (f.has_choice) s.outcome.chunk_s.push_back(now);
        if (f.usage) s.outcome.usage = f.usage;
        break;
    }
  }
}

void on_end(StreamState& s, const std::string& transport_error) {
  RequestOutcome& o = s.outcome;
  o.end_s = seconds_since(s.run_start);
  if (!transport_error.empty()) {
    o.failure = "connection";
    o.error = transport_error;
  } else if (s.status != 200) {
    o.failure = "http " + std::to_string(s.status);
    o.error = error_message(s.error_body);
  } else if (o.failure.empty() && (!s.saw_done || !o.usage)) {
    o.failure = "incomplete stream";
    o.error = !o.usage ? "the stream ended without a usage chunk" : "the stream ended without [DONE]";
  }
  o.ok = o.failure.empty();
  s.done(std::move(o));
}

}  // namespace

std::string completion_body(const std::string& model, const Tokens& prompt, int32_t max_tokens) {
  std::string b;
  b.reserve(prompt.size() * 6 + model.size() + 160);
  b += "{\"model\":";
  b += json::serialize(json::string(model));
  b += ",\"prompt\":[";
  for (size_t i = 0; i < prompt.size(); ++i) {
    if (i) b += ',';
    b += std::to_string(prompt[i]);
  }
  b += "],\"max_tokens\":";
  b += std::to_string(max_tokens);
  b += ",\"temperature\":0,\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
  return b;
}

void start_completion(client::ConnectionPool& pool, Clock::time_point run_start, const CompletionCall& call,
                      const Tokens& prompt, int32_t max_tokens, RequestOutcome outcome,
                      std::function<void(RequestOutcome)> done) {
  auto s = std::make_shared<StreamState>();
  s->outcome = std::move(outcome);
  s->outcome.prompt_tokens_sent = static_cast<int64_t>(prompt.size());
  s->outcome.max_tokens = max_tokens;
  s->run_start = run_start;
  s->done = std::move(done);
  s->outcome.start_s = seconds_since(run_start);

  client::HttpCall http;
  http.method = "POST";
  http.path = "/v1/completions";
  http.bearer = call.api_key;
  http.body = completion_body(call.model, prompt, max_tokens);
  http.headers = {{"User-Agent", "kvgate-bench-serve"}};
  http.timeout = call.timeout;
  client::ExchangeHandlers h;
  h.on_header = [s](int status, const client::HttpResponseHead&) { s->status = status; };
  h.on_body = [s](std::string_view bytes) { on_bytes(*s, bytes); };
  h.on_end = [s](const std::string& error) { on_end(*s, error); };
  client::HttpExchange::start(pool, http, std::move(h));
}

}  // namespace kvgate::loadgen
