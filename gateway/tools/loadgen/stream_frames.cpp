// SSE events and completion chunks, read defensively. Pure but for the
// splitter's own buffer.
#include "gateway/tools/loadgen/stream_frames.h"

#include <cmath>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace kvgate::loadgen {
namespace json = boost::json;

void SseSplitter::feed(std::string_view bytes, std::vector<std::string>& out) {
  pending_.append(bytes);
  size_t start = 0;
  for (;;) {
    const size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(pending_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = nl + 1;
    if (line.empty()) {  // the blank line ends an event
      if (has_event_) out.push_back(std::move(event_));
      event_.clear();
      has_event_ = false;
      continue;
    }
    if (line.substr(0, 5) != "data:") continue;  // comments, event:, id:, retry:
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (has_event_) event_.push_back('\n');
    event_.append(line);
    has_event_ = true;
  }
  pending_.erase(0, start);
}

namespace {

std::optional<int64_t> count(const json::value* v) {
  if (!v) return std::nullopt;
  if (v->is_int64() && v->get_int64() >= 0) return v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(v->get_uint64());
  if (v->is_double()) {
    const double d = v->get_double();
    if (std::isfinite(d) && d >= 0 && d < 9.2e18 && d == std::floor(d)) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

StreamFrame malformed(std::string why) {
  StreamFrame f;
  f.kind = StreamFrame::Kind::kMalformed;
  f.message = std::move(why);
  return f;
}

}  // namespace

StreamFrame read_stream_frame(std::string_view data) {
  if (data == "[DONE]") return StreamFrame{StreamFrame::Kind::kDone, false, std::nullopt, {}};
  json::error_code ec;
  const json::value v = json::parse(data, ec);
  if (ec) return malformed("a stream frame is not JSON: " + ec.message());
  if (!v.is_object()) return malformed("a stream frame is not a JSON object");
  const json::object& o = v.get_object();

  if (const json::value* e = o.if_contains("error")) {
    StreamFrame f;
    f.kind = StreamFrame::Kind::kError;
    const json::value* m = e->is_object() ? e->get_object().if_contains("message") : nullptr;
    f.message = m && m->is_string() ? std::string(m->get_string()) : json::serialize(*e);
    return f;
  }

  StreamFrame f;
  f.kind = StreamFrame::Kind::kChunk;
  if (const json::value* c = o.if_contains("choices")) {
    if (!c->is_array()) return malformed("\"choices\" is not an array");
    f.has_choice = !c->get_array().empty();
  }
  const json::value* u = o.if_contains("usage");
  if (u && !u->is_null()) {
    if (!u->is_object()) return malformed("\"usage\" is not an object");
    const json::object& uo = u->get_object();
    StreamUsage usage;
    auto prompt = count(uo.if_contains("prompt_tokens"));
    auto completion = count(uo.if_contains("completion_tokens"));
    if (!prompt || !completion) return malformed("\"usage\" lacks prompt_tokens or completion_tokens");
    usage.prompt_tokens = *prompt;
    usage.completion_tokens = *completion;
    if (const json::value* d = uo.if_contains("prompt_tokens_details"); d && d->is_object())
      usage.cached_tokens = count(d->get_object().if_contains("cached_tokens")).value_or(0);
    if (const json::value* k = uo.if_contains("kvgate"); k && k->is_object()) {
      usage.cost_micros = count(k->get_object().if_contains("cost_micros"));
      usage.fresh_prefill_tokens = count(k->get_object().if_contains("fresh_prefill_tokens"));
    }
    f.usage = usage;
  }
  return f;
}

}  // namespace kvgate::loadgen
