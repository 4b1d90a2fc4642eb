#include "gateway/cluster/front/replica_set.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "gateway/client/http_exchange.h"
#include "gateway/client/https_target.h"
#include "gateway/cluster/wire/event_wire.h"

namespace kvgate::front {

struct ReplicaSet::Replica {
  Replica(boost::asio::io_context& io, std::shared_ptr<boost::asio::ssl::context> tls, std::string u)
      : url(std::move(u)), pool(io, std::move(tls), client::parse_https_url(url, "replica"), /*verify_host=*/true) {}

  const std::string url;
  route::ReplicaId id = 0;
  client::ConnectionPool pool;  // io thread only
  bool checking = false;        // io thread only: a health check is in flight
  bool watched = false;         // io thread only: its events are subscribed to
  bool resyncing = false;       // io thread only: a snapshot is being fetched
  bool resync_failing = false;  // io thread only: the last resync failed (and was logged)
  std::chrono::steady_clock::time_point next_resync{};  // io thread only: none before (1 s apart, backing off to 60 s on failures)
  std::chrono::seconds resync_backoff{1};               // io thread only

  // Guarded by the set's mu_.
  bool up = false;
  std::optional<wire::ReplicaInfo> info;
  std::string registration_mismatch, registration_field;
  int64_t load_tokens = 0;
  int64_t placed = 0, retries_from = 0, stream_errors = 0;
  int64_t resync_failures = 0;
};

namespace {

void say(const std::string& line) {
  std::printf("kvgate: %s\n", line.c_str());
  std::fflush(stdout);
}

// A replica that binds its events on every interface ("tcp://*:5557",
// "tcp://0.0.0.0:5557") is reached at its URL's host.
std::string reachable_endpoint(const std::string& endpoint, const std::string& host) {
  for (const char* any : {"tcp://*:", "tcp://0.0.0.0:"}) {
    const std::string prefix(any);
    if (endpoint.rfind(prefix, 0) == 0) {
      std::string out = "tcp://";
      out.append(host).append(":").append(endpoint.substr(prefix.size()));
      return out;
    }
  }
  return endpoint;
}

}  // namespace

ReplicaSet::ReplicaSet(ReplicaSetOptions opt)
    : opt_(std::move(opt)),
      work_(io_.get_executor()),
      health_timer_(io_),
      index_(static_cast<int32_t>(std::max<size_t>(1, opt_.urls.size()))),
      policy_(route::make_route_policy(opt_.route_policy)),
      events_(index_, index_mu_, opt_.mine, wire::event_curve_keys(opt_.token)) {
  if (opt_.urls.empty()) throw Error("kvgate route needs at least one replica (--replica https://HOST:PORT)");
  if (opt_.urls.size() > static_cast<size_t>(route::ReplicaIndex::kMaxReplicas))
    throw Error("kvgate route takes at most " + std::to_string(route::ReplicaIndex::kMaxReplicas) + " replicas");
  const auto tls = client::make_client_tls({.ca_file = opt_.ca_file, .insecure = false});
  for (const std::string& u : opt_.urls) {
    for (const auto& r : replicas_)
      if (r->url == u) throw Error("replica " + u + " is listed twice");
    auto rep = std::make_unique<Replica>(io_, tls, u);
    rep->id = index_.add_replica();
    replicas_.push_back(std::move(rep));
  }
  events_.start();
  thread_ = std::thread([this] { io_.run(); });
  boost::asio::post(io_, [this] { check_health(); });
}

ReplicaSet::~ReplicaSet() {
  boost::asio::post(io_, [this] { health_timer_.cancel(); });
  work_.reset();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

const std::string& ReplicaSet::url(route::ReplicaId r) const { return replicas_.at(static_cast<size_t>(r))->url; }
client::ConnectionPool& ReplicaSet::pool(route::ReplicaId r) { return replicas_.at(static_cast<size_t>(r))->pool; }

void ReplicaSet::check_health() {
  for (auto& rep : replicas_) {
    if (rep->checking) continue;  // a slow replica: its last check has not ended yet
    rep->checking = true;
    auto body = std::make_shared<std::string>();
    auto status = std::make_shared<int>(0);
    client::HttpCall call;
    call.method = "GET";
    call.path = std::string(wire::kReplicaInfoPath);
    call.bearer = opt_.token;
    call.timeout = std::max<std::chrono::steady_clock::duration>(opt_.health_interval * 2, std::chrono::seconds(1));
    const route::ReplicaId r = rep->id;
    client::ExchangeHandlers h;
    h.on_header = [status](int s, const client::HttpResponseHead&) { *status = s; };
    h.on_body = [body](std::string_view b) {
      if (body->size() < (1u << 20)) body->append(b);
    };
    h.on_end = [this, r, body, status](const std::string& error) { on_info(r, *status, *body, error); };
    client::HttpExchange::start(rep->pool, call, std::move(h));
  }
  for (auto& rep : replicas_) maybe_resync(*rep);
  health_timer_.expires_after(opt_.health_interval);
  health_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) check_health();
  });
}

void ReplicaSet::on_info(route::ReplicaId r, int status, const std::string& body, const std::string& error) {
  Replica& rep = *replicas_.at(static_cast<size_t>(r));
  rep.checking = false;
  std::string why = error;
  std::optional<wire::ReplicaInfo> info;
  if (why.empty() && status != 200) why = "/internal/v1/info answered " + std::to_string(status);
  if (why.empty()) {
    try {
      info = wire::parse_replica_info(body);
    } catch (const std::exception& e) {
      why = std::string("/internal/v1/info: ") + e.what();
    }
  }
  if (info && !rep.watched && !info->block_events.empty()) {
    rep.watched = true;
    try {
      events_.watch(r, reachable_endpoint(info->block_events, rep.pool.target().host));
    } catch (const std::exception& e) {
      say("replica " + rep.url + ": " + e.what());
    }
  }
  MutexLock lock(mu_);
  if (info) {
    const std::string mismatch = wire::identity_mismatch(opt_.mine, info->identity);
    if (mismatch != rep.registration_mismatch && !mismatch.empty())
      say("replica " + rep.url + " is not scored for prefix overlap: its cache identity differs (" + mismatch + ")");
    rep.registration_mismatch = mismatch;
    rep.registration_field = wire::identity_mismatch_field(opt_.mine, info->identity);
    rep.info = std::move(info);
  }
  set_up(rep, why.empty(), why);
}

namespace {
// The largest snapshot taken: 5.8M blocks at 46 bytes each.
constexpr size_t kMaxSnapshotBytes = size_t{256} << 20;
}  // namespace

void ReplicaSet::maybe_resync(Replica& rep) {
  if (!rep.watched || rep.resyncing) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < rep.next_resync) return;
  const route::ReplicaId r = rep.id;
  ReplicaFeed feed;
  try {
    feed = events_.feed(r);
  } catch (const std::exception&) {
    return;  // its endpoint could not be watched
  }
  if (!feed.heard || !feed.scorable || !feed.wants_resync) return;
  rep.resyncing = true;
  rep.next_resync = now + rep.resync_backoff;
  // Before the request: every message numbered after the snapshot arrives from here on, and is kept.
  events_.begin_resync(r);
  auto body = std::make_shared<std::string>();
  auto status = std::make_shared<int>(0);
  auto too_big = std::make_shared<bool>(false);
  // Set once start() returns, before any handler runs (they run on this thread, never inline).
  auto exchange = std::make_shared<std::weak_ptr<client::HttpExchange>>();
  client::HttpCall call;
  call.method = "GET";
  call.path = std::string(wire::kReplicaBlocksPath);
  call.bearer = opt_.token;
  call.timeout = std::chrono::seconds(30);
  client::ExchangeHandlers h;
  h.on_header = [status](int s, const client::HttpResponseHead&) { *status = s; };
  h.on_body = [body, too_big, exchange](std::string_view b) {
    if (*too_big) return;
    if (body->size() + b.size() <= kMaxSnapshotBytes) {
      body->append(b);
      return;
    }
    *too_big = true;
    body->clear();
    if (const auto x = exchange->lock()) x->cancel();  // not worth the rest of the download
  };
  h.on_end = [this, r, body, status, too_big](const std::string& error) {
    std::string why = *too_big ? std::string() : error;
    if (*too_big) why.append("the snapshot is over ").append(std::to_string(kMaxSnapshotBytes)).append(" bytes");
    on_blocks(r, *status, *body, why);
  };
  try {
    *exchange = client::HttpExchange::start(rep.pool, call, std::move(h));
  } catch (const std::exception& e) {
    on_blocks(r, 0, {}, e.what());
  }
}

void ReplicaSet::on_blocks(route::ReplicaId r, int status, const std::string& body, const std::string& error) {
  Replica& rep = *replicas_.at(static_cast<size_t>(r));
  rep.resyncing = false;
  std::string why = error;
  if (why.empty() && status != 200) {
    why = std::string(wire::kReplicaBlocksPath);
    why.append(" answered ").append(std::to_string(status));
  }
  if (why.empty()) {
    try {
      const wire::EventMessage snapshot =
          wire::decode({reinterpret_cast<const std::byte*>(body.data()), body.size()});
      if (!events_.resync(r, snapshot)) why = "refused: of an instance the replica has left since, or too much changed meanwhile";
    } catch (const std::exception& e) {
      why = std::string(wire::kReplicaBlocksPath);
      why.append(": ").append(e.what());
    }
  }
  if (!why.empty()) {
    events_.abandon_resync(r);
    {
      MutexLock lock(mu_);
      ++rep.resync_failures;
    }
    if (!rep.resync_failing) say("replica " + rep.url + ": block resync failed, retried later: " + why);
    rep.resync_failing = true;
    rep.resync_backoff = std::min(rep.resync_backoff * 2, std::chrono::seconds(60));
    rep.next_resync = std::chrono::steady_clock::now() + rep.resync_backoff;
    return;
  }
  if (rep.resync_failing) say("replica " + rep.url + ": block resync done");
  rep.resync_failing = false;
  rep.resync_backoff = std::chrono::seconds(1);
}

void ReplicaSet::set_up(Replica& rep, bool up, const std::string& why) {
  if (rep.up == up) return;
  rep.up = up;
  say("replica " + rep.url + (up ? " is up" : " is down: " + why));
}

void ReplicaSet::mark_down(route::ReplicaId r, const std::string& why) {
  MutexLock lock(mu_);
  set_up(*replicas_.at(static_cast<size_t>(r)), false, why);
}

void ReplicaSet::add_load(route::ReplicaId r, int64_t tokens) {
  MutexLock lock(mu_);
  replicas_.at(static_cast<size_t>(r))->load_tokens += tokens;
}

void ReplicaSet::count_retry(route::ReplicaId from) {
  MutexLock lock(mu_);
  ++replicas_.at(static_cast<size_t>(from))->retries_from;
}

void ReplicaSet::count_stream_error(route::ReplicaId r) {
  MutexLock lock(mu_);
  ++replicas_.at(static_cast<size_t>(r))->stream_errors;
}

std::optional<route::ReplicaId> ReplicaSet::choose(const route::RouteRequest& request, std::optional<route::ReplicaId> avoid) {
  std::vector<route::ReplicaState> states(replicas_.size());
  {
    MutexLock lock(mu_);
    for (size_t i = 0; i < replicas_.size(); ++i) {
      const Replica& rep = *replicas_[i];
      states[i].live = rep.up && rep.info && !(avoid && *avoid == rep.id);
      states[i].scorable = rep.registration_mismatch.empty();
      states[i].load = rep.load_tokens;
    }
  }
  events_.keep_scorable(states);  // and its events heard with our identity
  std::optional<route::ReplicaId> chosen;
  {
    std::lock_guard lock(index_mu_);
    // A prompt_cache_key goes where its key went while that replica has
    // room; otherwise where the policy says, which the key follows from then.
    if (request.placement_key != 0) chosen = sticky_.find(request.placement_key, states, request.prompt_tokens);
    if (!chosen) chosen = policy_->choose(request, index_, states);
    if (chosen && request.placement_key != 0) sticky_.bind(request.placement_key, *chosen);
  }
  if (chosen) {
    MutexLock lock(mu_);
    ++replicas_.at(static_cast<size_t>(*chosen))->placed;
  }
  return chosen;
}

std::optional<RequestBounds> ReplicaSet::bounds() const {
  MutexLock lock(mu_);
  std::optional<RequestBounds> out;
  for (const auto& rep : replicas_) {
    if (!rep->info) continue;
    const RequestBounds& b = rep->info->bounds;
    if (!out) {
      out = b;
      continue;
    }
    out->context_length = std::min(out->context_length, b.context_length);
    out->pool_blocks = std::min(out->pool_blocks, b.pool_blocks);
  }
  return out;
}

std::vector<ReplicaView> ReplicaSet::snapshot() const {
  std::vector<ReplicaView> out(replicas_.size());
  std::vector<ReplicaFeed> feeds = event_feeds();
  for (size_t i = 0; i < replicas_.size(); ++i) out[i].feed = std::move(feeds[i]);
  MutexLock lock(mu_);
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const Replica& rep = *replicas_[i];
    ReplicaView& v = out[i];
    v.url = rep.url;
    v.up = rep.up;
    v.registered = rep.info.has_value();
    v.mismatch = rep.registration_mismatch.empty() ? v.feed.mismatch : rep.registration_mismatch;
    v.mismatch_field = rep.registration_mismatch.empty() ? v.feed.mismatch_field : rep.registration_field;
    v.scorable = rep.registration_mismatch.empty() && v.feed.scorable;
    if (!v.scorable && v.mismatch.empty())
      v.mismatch = v.registered ? "no block events heard yet" : "not registered yet";
    v.load_tokens = rep.load_tokens;
    v.placed = rep.placed;
    v.retries_from = rep.retries_from;
    v.stream_errors = rep.stream_errors;
    v.resyncs = v.feed.resyncs;
    v.resync_failures = rep.resync_failures;
  }
  return out;
}

std::vector<ReplicaFeed> ReplicaSet::event_feeds() const {
  std::vector<ReplicaFeed> out(replicas_.size());  // unwatched: not heard, so not scorable
  for (auto& [r, feed] : events_.feeds()) out.at(static_cast<size_t>(r)) = std::move(feed);
  return out;
}

std::string ReplicaSet::policy_name() const {
  std::lock_guard lock(index_mu_);
  return policy_->name();
}

}  // namespace kvgate::front
