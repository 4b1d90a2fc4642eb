// Invariants:
//   - a started request's callback gets its completion exactly once, on the
//     I/O thread, after every token it was given (complete());
//   - the load a request put on a replica is taken off when it completes,
//     from the replica it was last sent to;
//   - a flight is in flights_ from start() until its completion, so
//     cancel() and shutdown() always find it.
#include "gateway/cluster/front/remote_engine.h"

#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include <optional>

#include "engine/sched/request_limits.h"
#include "gateway/client/http_exchange.h"
#include "gateway/cluster/wire/replica_wire.h"

namespace kvgate::front {
namespace {

// The message of a replica's error body (OpenAI's shape), or the body.
std::string error_message(const std::string& body) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(body, ec);
  if (!ec && v.is_object())
    if (const auto* e = v.as_object().if_contains("error"); e && e->is_object())
      if (const auto* m = e->as_object().if_contains("message"); m && m->is_string())
        return std::string(m->as_string());
  return body.substr(0, 300);
}

}  // namespace

struct RemoteEngine::Flight {
  RequestId id = 0;
  std::string body;                      // the wire::ReplicaCall, sent again on a retry
  std::vector<cache::BlockHash> chain;   // for a retry's placement
  route::RouteRequest route;
  int64_t load = 0;                      // prompt + max_tokens
  int32_t prompt_tokens = 0;
  RequestStream::Callback cb;
  EngineClient::OnPlaced placed;            // told again when a retry moves it
  SteadyClock::time_point arrival;

  // The I/O thread's alone once sent.
  route::ReplicaId replica = 0;
  bool retried = false;
  int status = 0;
  std::string error_body;                // a non-200 answer's body
  std::string wire_error;                // the stream could not be read
  std::optional<wire::ReplicaStreamReader> reader;
  std::shared_ptr<client::HttpExchange> exchange;
  std::string replica_request;           // the replica's id of it, from the stream's header
  Tokens output;
  std::vector<SteadyClock::time_point> token_times;
  bool completed = false;
  bool cancelled = false;                // set on the I/O thread by cancel()
};

namespace {

// As RequestStream does: a callback that throws is the consumer's bug and
// must not end the I/O thread; it loses that call.
void call_back(const RemoteEngine::Flight& f, TokenId t, const Completion* done) {
  try {
    f.cb(t, done);
  } catch (const std::exception&) {
  }
}

}  // namespace

RemoteEngine::RemoteEngine(ReplicaSet& replicas, std::optional<cache::KvIdentity> identity, RequestBounds bounds)
    : replicas_(replicas), identity_(std::move(identity)), bounds_(bounds) {}

RemoteEngine::~RemoteEngine() { shutdown(); }

std::string RemoteEngine::failure() const {
  for (const ReplicaView& v : replicas_.snapshot())
    if (v.up) return {};
  return "no replica is in rotation";
}

RequestId RemoteEngine::start(Request req, Submitter who, RequestStream::Callback cb, const OnPlaced& placed) {
  // The replicas' pools differ: the request must fit the smallest, like the
  // engine's own check against its pool, before a replica sees it.
  if (const std::optional<RequestBounds> b = replicas_.bounds()) {
    RequestBounds check = bounds_;
    check.pool_blocks = b->pool_blocks;
    check.context_length = std::min(check.context_length, b->context_length);
    (void)request_limits(req, check);
  }
  auto f = std::make_shared<Flight>();
  f->id = next_id_.fetch_add(1);
  f->chain = std::move(req.prompt_chain);
  req.prompt_chain.clear();
  f->prompt_tokens = static_cast<int32_t>(req.prompt.size());
  f->load = static_cast<int64_t>(req.prompt.size()) + req.max_tokens;
  f->route = {f->chain, static_cast<int64_t>(req.prompt.size()), bounds_.block_size, req.placement_key};
  f->body = wire::encode_replica_call(req, who);
  f->cb = std::move(cb);
  f->arrival = SteadyClock::now();
  const std::optional<route::ReplicaId> r = replicas_.choose(f->route);
  if (!r) throw EngineFailed("no replica is in rotation");
  f->replica = *r;
  replicas_.add_load(*r, f->load);
  {
    MutexLock lock(mu_);
    flights_.emplace(f->id, f);
  }
  f->placed = placed;
  if (placed) placed(f->id, replicas_.url(*r));
  boost::asio::post(replicas_.io(), [this, f] { send(f); });
  return f->id;
}

void RemoteEngine::send(const std::shared_ptr<Flight>& f) {
  if (f->cancelled) return ended(f, "cancelled");
  f->status = 0;
  f->error_body.clear();
  f->replica_request.clear();
  // The reader is the flight's own: its callbacks hold the flight by a
  // plain pointer (a shared one would be a cycle, never freed); the
  // exchange's handlers, which call the reader, hold it alive meanwhile.
  Flight* raw = f.get();
  f->reader.emplace(
      f->arrival,
      [raw](TokenId t) {
        raw->output.push_back(t);
        raw->token_times.push_back(SteadyClock::now());
        call_back(*raw, t, nullptr);
      },
      [this, raw](Completion c) { complete(*raw, std::move(c)); });
  client::HttpCall call;
  call.method = "POST";
  call.path = std::string(wire::kReplicaGeneratePath);
  call.bearer = replicas_.token();
  call.body = f->body;
  call.headers.emplace_back("Accept", std::string(wire::kReplicaStreamContentType));
  client::ExchangeHandlers h;
  h.on_header = [f](int status, const client::HttpResponseHead& head) {
    f->status = status;
    f->replica_request = head.field(wire::kReplicaRequestIdHeader);
  };
  h.on_body = [f](std::string_view bytes) {
    if (f->status != 200) {
      if (f->error_body.size() < 4096) f->error_body.append(bytes);
      return;
    }
    if (!f->wire_error.empty() || f->completed) return;
    try {
      f->reader->feed(bytes, SteadyClock::now());
    } catch (const std::exception& e) {
      f->wire_error = e.what();
      if (f->exchange) f->exchange->cancel();
    }
  };
  // A completed flight (its done line read, or cancelled) is off flights_,
  // so shutdown() may have returned and the engine be gone while the
  // exchange still reads its last bytes: then only the flight is touched.
  h.on_end = [this, f](const std::string& error) {
    if (!f->completed) ended(f, error);
  };
  f->exchange = client::HttpExchange::start(replicas_.pool(f->replica), call, std::move(h));
}

void RemoteEngine::ended(const std::shared_ptr<Flight>& f, const std::string& error) {
  f->exchange.reset();
  if (f->completed) return;
  const std::string& url = replicas_.url(f->replica);
  // Why it ended without its done line.
  std::string why;
  bool unreachable = false;
  if (f->cancelled) {
    why = "cancelled";
  } else if (!f->wire_error.empty()) {
    why = "its stream could not be read: " + f->wire_error;
  } else if (!error.empty()) {
    why = error;
    unreachable = true;
  } else if (f->status != 200) {
    why = "it answered " + std::to_string(f->status) + ": " + error_message(f->error_body);
  } else {
    why = "its stream ended before the request did";
    unreachable = true;
  }
  if (unreachable) replicas_.mark_down(f->replica, why);
  // Before the first token nothing has reached the client: once, elsewhere.
  const bool retryable = unreachable || f->status >= 500;
  if (!f->cancelled && f->output.empty() && retryable && !f->retried) {
    if (const std::optional<route::ReplicaId> next = replicas_.choose(f->route, f->replica)) {
      replicas_.count_retry(f->replica);
      replicas_.add_load(f->replica, -f->load);
      replicas_.add_load(*next, f->load);
      f->replica = *next;
      f->retried = true;
      if (f->placed) f->placed(f->id, replicas_.url(*next));
      return send(f);
    }
  }
  if (!f->output.empty() && !f->cancelled) replicas_.count_stream_error(f->replica);

  Completion c;
  c.result.output = f->output;
  c.result.prompt_tokens = f->prompt_tokens;
  c.timing.arrival = f->arrival;
  c.timing.finished = SteadyClock::now();
  c.timing.token_times = f->token_times;
  if (!f->output.empty()) {
    // The replica ran the prompt (a token came) but its accounting never
    // arrived: all of it is billed as fresh prefill.
    c.result.fresh_prefill_tokens = f->prompt_tokens;
    c.timing.admitted = c.timing.first_token = f->token_times.front();
    c.timing.arrival_step = c.timing.admitted_step = c.timing.first_token_step = 0;
  }
  if (f->cancelled) {
    c.result.finish = FinishReason::kCancelled;
  } else {
    c.result.finish = FinishReason::kError;
    c.error = "replica " + url + " failed: " + why;
  }
  complete(*f, std::move(c));
}

void RemoteEngine::complete(Flight& f, Completion c) {
  if (f.completed) return;
  f.completed = true;
  // The exchange may still be reading its last bytes; it holds the flight
  // through its handlers, so the flight must not hold it back (a cycle an
  // I/O thread stopped meanwhile would never free).
  f.exchange.reset();
  c.result.id = f.id;
  replicas_.add_load(f.replica, -f.load);
  call_back(f, -1, &c);
  MutexLock lock(mu_);
  flights_.erase(f.id);  // the caller still holds it
  if (flights_.empty()) drained_.notify_all();
}

void RemoteEngine::cancel(RequestId id) {
  std::shared_ptr<Flight> f;
  {
    MutexLock lock(mu_);
    if (auto it = flights_.find(id); it != flights_.end()) f = it->second;
  }
  if (!f) return;
  boost::asio::post(replicas_.io(), [this, f] {
    if (f->completed || f->cancelled) return;
    f->cancelled = true;
    if (!f->exchange) return;  // not sent yet: send() ends it
    if (f->replica_request.empty()) return f->exchange->cancel();  // no stream yet: nothing to account for
    // Ask the replica, so that its stream ends with the request's accounting
    // (cached and fresh prefill, what was written); should that fail,
    // closing the connection cancels it there too.
    client::HttpCall call;
    call.method = "POST";
    call.path = std::string(wire::kReplicaCancelPath) + f->replica_request;
    call.bearer = replicas_.token();
    call.timeout = std::chrono::seconds(5);
    auto status = std::make_shared<int>(0);
    client::ExchangeHandlers h;
    h.on_header = [status](int s, const client::HttpResponseHead&) { *status = s; };
    h.on_end = [f, status](const std::string& error) {
      if ((!error.empty() || *status != 200) && f->exchange) f->exchange->cancel();
    };
    client::HttpExchange::start(replicas_.pool(f->replica), call, std::move(h));
  });
}

void RemoteEngine::shutdown() {
  std::vector<RequestId> ids;
  {
    MutexLock lock(mu_);
    for (const auto& [id, f] : flights_) ids.push_back(id);
  }
  for (RequestId id : ids) cancel(id);
  MutexLock lock(mu_);
  while (!flights_.empty()) drained_.wait(mu_);
}

}  // namespace kvgate::front
