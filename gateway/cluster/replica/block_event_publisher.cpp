#include "gateway/cluster/replica/block_event_publisher.h"

#include <array>
#include <random>
#include <vector>
#include <zmq.hpp>

#include "base/error.h"

namespace kvgate::replica {

struct BlockEventPublisher::Socket {
  zmq::context_t context{1};
  zmq::socket_t zap{context, zmq::socket_type::rep};  // bound before pub, so no handshake goes unchecked
  zmq::socket_t pub{context, zmq::socket_type::pub};
};

namespace {

uint64_t random_instance() {
  std::random_device rd;
  const uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return v ? v : 1;
}

}  // namespace

BlockEventPublisher::BlockEventPublisher(BlockEventPublisherOptions options)
    : opt_(std::move(options)), instance_(random_instance()), socket_(std::make_unique<Socket>()) {
  if (opt_.max_batch_events == 0 || opt_.max_batch_events > wire::kMaxSocketEvents)
    throw Error("block events: a batch holds 1 to " + std::to_string(wire::kMaxSocketEvents) + " events");
  try {
    socket_->zap.set(zmq::sockopt::linger, 0);
    socket_->zap.set(zmq::sockopt::rcvtimeo, 100);  // so the handler sees zap_stop_
    socket_->zap.bind("inproc://zeromq.zap.01");
    // Bounded in memory: a front that stops reading costs messages, never the replica's memory.
    socket_->pub.set(zmq::sockopt::sndhwm, wire::kSocketQueueMessages);
    socket_->pub.set(zmq::sockopt::linger, 200);
    socket_->pub.set(zmq::sockopt::curve_server, true);
    socket_->pub.set(zmq::sockopt::curve_secretkey, opt_.keys.server_secret);
    socket_->pub.set(zmq::sockopt::zap_domain, "kvgate-block-events");
    socket_->pub.bind(opt_.endpoint);
    bound_ = socket_->pub.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    throw Error("block events: cannot bind " + opt_.endpoint + ": " + e.what());
  }
  open_.reserve(1024);
  zap_thread_ = std::thread([this] { authenticate(); });
  thread_ = std::thread([this] { run(); });
}

BlockEventPublisher::~BlockEventPublisher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  zap_stop_ = true;
  zap_thread_.join();
}

// A ZAP request: version, request id, domain, address, identity,
// mechanism, then the mechanism's credentials (CURVE: the client's 32-byte
// public key). The reply: version, request id, status code and text, user
// id, metadata. Only the front's key, derived from the internal token, is
// admitted.
void BlockEventPublisher::authenticate() {
  const std::string front = wire::z85_key_bytes(opt_.keys.client_public);
  while (!zap_stop_) {
    std::vector<zmq::message_t> req;
    zmq::message_t part;
    try {
      if (!socket_->zap.recv(part)) continue;  // the receive timeout: look at zap_stop_
      req.push_back(std::move(part));
      while (req.back().more()) {
        zmq::message_t next;
        (void)socket_->zap.recv(next);
        req.push_back(std::move(next));
      }
    } catch (const zmq::error_t&) {
      return;  // the context is closing
    }
    const bool ok = req.size() >= 7 && req[5].to_string_view() == "CURVE" && req[6].to_string_view() == front;
    if (!ok) refused_subscribers_.fetch_add(1, std::memory_order_relaxed);
    const std::array<std::string, 6> reply{"1.0", req.size() > 1 ? req[1].to_string() : "", ok ? "200" : "400",
                                           ok ? "OK" : "not the front's key", "", ""};
    for (size_t i = 0; i < reply.size(); ++i)
      (void)socket_->zap.send(zmq::buffer(reply[i]), i + 1 < reply.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

void BlockEventPublisher::on_block_event(const cache::BlockEvent& e) {
  const wire::WireEvent w{e.kind, e.tier, e.hash, e.parent, e.tenant, e.depth};
  std::lock_guard lock(mu_);
  ++stats_.events;
  wire::apply_event(stats_.digest, w);
  HeldTier& held = held_[static_cast<size_t>(e.tier)];
  if (e.kind == cache::BlockEventKind::kStored)
    held.insert_or_assign(e.hash, Held{e.parent, e.tenant, e.depth});
  else
    held.erase(e.hash);
  if (queued_ >= opt_.queue_events) {
    ++stats_.dropped;
    return;
  }
  open_.push_back(w);
  ++queued_;
  if (open_.size() >= opt_.max_batch_events) close_batch();
}

void BlockEventPublisher::close_batch() {
  if (open_.empty()) return;
  wire::EventMessage& m = closed_.emplace_back();
  m.type = wire::EventMessage::Type::kEvents;
  m.seq = ++seq_;
  m.events.swap(open_);
}

wire::EventMessage BlockEventPublisher::snapshot() {
  wire::EventMessage m;
  m.type = wire::EventMessage::Type::kEvents;
  m.instance = instance_;
  m.identity = opt_.identity;
  std::lock_guard lock(mu_);
  close_batch();
  m.seq = seq_;
  size_t n = 0;
  for (const HeldTier& t : held_) n += t.size();
  m.events.reserve(n);
  for (size_t tier = 0; tier < held_.size(); ++tier)
    for (const auto& [hash, h] : held_[tier])
      m.events.push_back({cache::BlockEventKind::kStored, static_cast<policies::Tier>(tier), hash, h.parent, h.tenant,
                          h.depth});
  ++stats_.snapshots;
  return m;
}

BlockEventPublisherStats BlockEventPublisher::stats() const {
  std::lock_guard lock(mu_);
  BlockEventPublisherStats s = stats_;
  s.refused_subscribers = refused_subscribers_.load(std::memory_order_relaxed);
  return s;
}

void BlockEventPublisher::send(wire::EventMessage& m) {
  m.instance = instance_;
  m.identity = opt_.identity;
  const std::vector<std::byte> bytes = wire::encode(m);
  // dontwait: at the high-water mark a PUB socket drops rather than blocks.
  (void)socket_->pub.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait);
  std::lock_guard lock(mu_);
  ++stats_.messages;
  if (m.type == wire::EventMessage::Type::kEvents) stats_.sent += static_cast<int64_t>(m.events.size());
}

// Each round closes the open batch, then, when due, takes the digest after
// it (the digest's seq follows the batch's: it covers exactly the events of
// the messages before it, and those dropped), and sends every closed
// message in seq order. Only this thread sends, so the order on the wire is
// the order of the numbers.
void BlockEventPublisher::run() {
  using Clock = std::chrono::steady_clock;
  auto next_digest = Clock::now() + opt_.digest_interval;
  std::deque<wire::EventMessage> out;
  for (bool last = false; !last;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, opt_.batch_interval, [&] { return stop_; });
      last = stop_;
      close_batch();
      if (const auto now = Clock::now(); now >= next_digest || last) {
        wire::EventMessage& m = closed_.emplace_back();
        m.type = wire::EventMessage::Type::kDigest;
        m.seq = ++seq_;
        m.digest = stats_.digest;
        next_digest = now + opt_.digest_interval;
      }
      out.swap(closed_);
      queued_ = 0;
    }
    for (wire::EventMessage& m : out) send(m);
    out.clear();
  }
}

}  // namespace kvgate::replica
