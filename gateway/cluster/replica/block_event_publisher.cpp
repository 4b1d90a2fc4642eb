#include "gateway/cluster/replica/block_event_publisher.h"

#include <random>
#include <zmq.hpp>

#include "base/error.h"

namespace kvgate::replica {

struct BlockEventPublisher::Socket {
  zmq::context_t context{1};
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
  try {
    // Bounded in memory: a front that stops reading costs messages, never the replica's memory.
    socket_->pub.set(zmq::sockopt::sndhwm, 10000);
    socket_->pub.set(zmq::sockopt::linger, 200);
    socket_->pub.bind(opt_.endpoint);
    bound_ = socket_->pub.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    throw Error("block events: cannot bind " + opt_.endpoint + ": " + e.what());
  }
  open_.reserve(1024);
  thread_ = std::thread([this] { run(); });
}

BlockEventPublisher::~BlockEventPublisher() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
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
  return stats_;
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
