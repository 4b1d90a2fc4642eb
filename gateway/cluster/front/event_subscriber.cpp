#include "gateway/cluster/front/event_subscriber.h"

#include <cstdio>
#include <utility>
#include <zmq.hpp>

#include "gateway/cluster/route/route_error.h"

namespace kvgate::front {

struct EventSubscriber::Watched {
  route::ReplicaId id;
  ReplicaFeed feed;  // guarded by the subscriber's mu_
  std::unique_ptr<zmq::socket_t> socket;
  // Guarded by mu_: while feed.resyncing, every message applied (in seq
  // order), for resync() to apply again after the snapshot.
  std::vector<wire::EventMessage> kept;
  size_t kept_events = 0;
  bool kept_overflow = false;  // past kMaxResyncKept: the resync will be refused
  uint64_t left_instance = 0;  // the instance the feed left at its last restart
};

namespace {

zmq::context_t& context() {
  static zmq::context_t ctx{1};
  return ctx;
}

}  // namespace

EventSubscriber::EventSubscriber(route::ReplicaIndex& index, std::mutex& index_mu, cache::KvIdentity mine,
                                 wire::EventCurveKeys keys)
    : index_(index), index_mu_(index_mu), mine_(mine), keys_(std::move(keys)) {}

EventSubscriber::~EventSubscriber() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void EventSubscriber::watch(route::ReplicaId r, std::string endpoint) {
  auto w = std::make_unique<Watched>();
  w->id = r;
  w->feed.endpoint = endpoint;
  w->socket = std::make_unique<zmq::socket_t>(context(), zmq::socket_type::sub);
  try {
    w->socket->set(zmq::sockopt::subscribe, "");
    w->socket->set(zmq::sockopt::rcvhwm, wire::kSocketQueueMessages);
    // ZeroMQ checks the frame as it arrives: the message inside CURVE's box
    // (a command name, a nonce, a MAC and a flags byte: 33 bytes).
    w->socket->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(wire::kMaxSocketMessageBytes + 64));
    w->socket->set(zmq::sockopt::linger, 0);
    w->socket->set(zmq::sockopt::curve_serverkey, keys_.server_public);
    w->socket->set(zmq::sockopt::curve_publickey, keys_.client_public);
    w->socket->set(zmq::sockopt::curve_secretkey, keys_.client_secret);
    w->socket->connect(endpoint);  // ZeroMQ retries in the background until the replica is up
  } catch (const zmq::error_t& e) {
    throw route::RouteError("block events: cannot connect to " + endpoint + ": " + e.what());
  }
  std::lock_guard lock(mu_);
  watched_.push_back(std::move(w));
}

void EventSubscriber::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

ReplicaFeed EventSubscriber::feed(route::ReplicaId r) const {
  std::lock_guard lock(mu_);
  for (const auto& w : watched_)
    if (w->id == r) return w->feed;
  throw route::RouteError("block events: replica " + std::to_string(r) + " is not watched");
}

std::vector<std::pair<route::ReplicaId, ReplicaFeed>> EventSubscriber::feeds() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<route::ReplicaId, ReplicaFeed>> out;
  for (const auto& w : watched_) out.emplace_back(w->id, w->feed);
  return out;
}

void EventSubscriber::keep_scorable(std::span<route::ReplicaState> states) const {
  std::vector<bool> heard(states.size(), false);  // watched, and its feed scorable
  std::lock_guard lock(mu_);
  for (const auto& w : watched_) {
    const auto r = static_cast<size_t>(w->id);
    if (r < states.size()) heard[r] = w->feed.scorable;
  }
  for (size_t r = 0; r < states.size(); ++r) states[r].scorable = states[r].scorable && heard[r];
}

void EventSubscriber::apply_bytes(route::ReplicaId r, std::span<const std::byte> bytes) {
  try {
    apply(r, wire::decode(bytes));
  } catch (const wire::WireError& e) {
    std::lock_guard lock(mu_);
    for (auto& w : watched_)
      if (w->id == r && w->feed.bad_messages++ == 0)
        std::fprintf(stderr, "kvgate route: replica %d (%s) sent a bad block event message: %s\n", r,
                     w->feed.endpoint.c_str(), e.what());
  }
}

EventSubscriber::Watched& EventSubscriber::find(route::ReplicaId r) {
  for (auto& x : watched_)
    if (x->id == r) return *x;
  throw route::RouteError("block events: replica " + std::to_string(r) + " is not watched");
}

void EventSubscriber::check_header(Watched& w, const wire::EventMessage& m) {
  ReplicaFeed& f = w.feed;
  const route::ReplicaId r = w.id;
  const std::string why = wire::identity_mismatch(mine_, m.identity);
  const bool restarted = f.heard && m.instance != f.instance;
  if (!f.heard || restarted || why != f.mismatch) {
    if (!why.empty() && why != f.mismatch)
      std::fprintf(stderr, "kvgate route: replica %d (%s) is not scored for prefix overlap: %s\n", r,
                   f.endpoint.c_str(), why.c_str());
    else if (why.empty() && !f.mismatch.empty())
      std::fprintf(stderr, "kvgate route: replica %d (%s) is scored again: its cache identity is ours\n", r,
                   f.endpoint.c_str());
    f.mismatch = why;
    f.mismatch_field = wire::identity_mismatch_field(mine_, m.identity);
    // A restart or a change of identity: what the index held for it is void.
    if (f.heard) {
      std::lock_guard index_lock(index_mu_);
      index_.cleared(r);
    }
    if (restarted) {
      ++f.restarts;
      w.left_instance = f.instance;
      w.kept.clear();  // the old instance's messages say nothing of the new one
      w.kept_events = 0;
    }
    f.view = {};
    f.view_agrees = true;
    f.wants_resync = false;  // a fresh start: the sequence check below says whether it began late
    f.instance = m.instance;
    f.last_seq = 0;
  }
  f.heard = true;
  f.scorable = why.empty();
}

void EventSubscriber::apply_events(Watched& w, const wire::EventMessage& m) {
  for (const wire::WireEvent& e : m.events) {
    apply_event(w.feed.view, e);
    if (e.kind == cache::BlockEventKind::kStored)
      index_.stored(w.id, e.hash, e.tier);
    else
      index_.removed(w.id, e.hash, e.tier);
  }
}

void EventSubscriber::apply(route::ReplicaId r, const wire::EventMessage& m) {
  std::lock_guard lock(mu_);
  Watched& w = find(r);
  ReplicaFeed& f = w.feed;
  ++f.messages;
  check_header(w, m);

  if (f.last_seq != 0 && m.seq <= f.last_seq) return;  // a duplicate or stale message
  if (m.seq > f.last_seq + 1) {  // lost messages, or the first heard is past 1: a late start
    ++f.gaps;
    f.lost_messages += static_cast<int64_t>(m.seq - f.last_seq - 1);
    f.wants_resync = true;
  }
  f.last_seq = m.seq;
  if (f.resyncing && !w.kept_overflow) {
    if (w.kept_events + m.events.size() > kMaxResyncKept) {
      w.kept_overflow = true;
      w.kept = {};
      w.kept_events = 0;
    } else {
      w.kept.push_back(m);
      w.kept_events += m.events.size();
    }
  }
  if (!f.scorable) return;

  if (m.type == wire::EventMessage::Type::kDigest) {
    if (f.resyncing) return;  // the view is about to be rebuilt: compared then, in resync()
    ++f.digests;
    f.view_agrees = f.view == m.digest;
    if (!f.view_agrees) {
      ++f.digest_mismatches;
      f.wants_resync = true;
    }
    return;
  }
  f.events += static_cast<int64_t>(m.events.size());
  std::lock_guard index_lock(index_mu_);
  apply_events(w, m);
}

void EventSubscriber::begin_resync(route::ReplicaId r) {
  std::lock_guard lock(mu_);
  Watched& w = find(r);
  w.feed.resyncing = true;
  w.kept.clear();
  w.kept_events = 0;
  w.kept_overflow = false;
}

void EventSubscriber::abandon_resync(route::ReplicaId r) {
  std::lock_guard lock(mu_);
  Watched& w = find(r);
  w.feed.resyncing = false;
  w.kept = {};
  w.kept_events = 0;
  w.kept_overflow = false;
}

bool EventSubscriber::resync(route::ReplicaId r, const wire::EventMessage& snapshot) {
  if (snapshot.type != wire::EventMessage::Type::kEvents)
    throw route::RouteError("block events: a snapshot of replica " + std::to_string(r) + " must be an events message");
  std::lock_guard lock(mu_);
  Watched& w = find(r);
  ReplicaFeed& f = w.feed;
  if (!f.resyncing)
    throw route::RouteError("block events: resync of replica " + std::to_string(r) + " without begin_resync");
  f.resyncing = false;
  std::vector<wire::EventMessage> kept = std::move(w.kept);
  w.kept = {};
  w.kept_events = 0;
  const bool overflow = std::exchange(w.kept_overflow, false);
  // Taken before a restart the feed has since seen: it describes the old instance.
  if (f.heard && snapshot.instance != f.instance && snapshot.instance == w.left_instance) return false;
  // Too much happened meanwhile to keep: the snapshot alone would lose it.
  if (overflow) return false;
  const bool other_instance = f.heard && snapshot.instance != f.instance;
  check_header(w, snapshot);
  if (other_instance) kept.clear();  // the old instance's messages

  // From scratch, under the index's lock throughout: a request placed
  // meanwhile sees the old view or the new one, never half of it.
  std::lock_guard index_lock(index_mu_);
  index_.cleared(r);
  f.view = {};
  f.view_agrees = true;
  if (f.scorable) apply_events(w, snapshot);
  uint64_t last = snapshot.seq;
  bool hole = false;
  for (const wire::EventMessage& m : kept) {
    if (m.seq <= snapshot.seq) continue;  // in the snapshot already
    if (m.seq != last + 1) hole = true;   // lost on the way after the snapshot
    last = m.seq;
    if (!f.scorable) continue;
    if (m.type == wire::EventMessage::Type::kDigest) {
      ++f.digests;
      f.view_agrees = f.view == m.digest;
      if (!f.view_agrees) {
        ++f.digest_mismatches;
        hole = true;
      }
      continue;
    }
    apply_events(w, m);
  }
  f.last_seq = last;
  f.wants_resync = hole;
  ++f.resyncs;
  return true;
}

void EventSubscriber::run() {
  // The sockets polled, refreshed when watch() added one (a front learns a
  // replica's endpoint when the replica first answers it).
  std::vector<Watched*> polled;
  std::vector<zmq::pollitem_t> items;
  zmq::message_t msg;
  while (!stop_) {
    {
      std::lock_guard lock(mu_);
      for (size_t i = polled.size(); i < watched_.size(); ++i) {
        polled.push_back(watched_[i].get());
        items.push_back({watched_[i]->socket->handle(), 0, ZMQ_POLLIN, 0});
      }
    }
    if (items.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (zmq::poll(items, std::chrono::milliseconds(100)) <= 0) continue;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      // Drained up to a bound, so one busy replica cannot starve the others.
      for (int n = 0; n < 64 && polled[i]->socket->recv(msg, zmq::recv_flags::dontwait); ++n)
        apply_bytes(polled[i]->id, {static_cast<const std::byte*>(msg.data()), msg.size()});
    }
  }
}

}  // namespace kvgate::front
