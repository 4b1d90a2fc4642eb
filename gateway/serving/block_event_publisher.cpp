#include "gateway/serving/block_event_publisher.h"

#include <random>
#include <zmq.hpp>

#include "engine/error.h"

namespace kvgate::serving {

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
  queue_.reserve(1024);
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
  const route::WireEvent w{e.kind, e.tier, e.hash, e.parent, e.tenant, e.depth};
  std::lock_guard lock(mu_);
  ++stats_.events;
  route::apply_event(stats_.digest, w);
  if (queue_.size() >= opt_.queue_events) {
    ++stats_.dropped;
    return;
  }
  queue_.push_back(w);
}

BlockEventPublisherStats BlockEventPublisher::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void BlockEventPublisher::send(route::EventMessage& m) {
  m.instance = instance_;
  m.seq = ++seq_;
  m.identity = opt_.identity;
  const std::vector<std::byte> bytes = route::encode(m);
  // dontwait: at the high-water mark a PUB socket drops rather than blocks.
  (void)socket_->pub.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait);
  std::lock_guard lock(mu_);
  ++stats_.messages;
  if (m.type == route::EventMessage::Type::kEvents) stats_.sent += static_cast<int64_t>(m.events.size());
}

// Each round sends everything queued (in messages of at most
// max_batch_events), then, when due, the digest taken with that queue: it
// covers exactly the events sent before it and those dropped.
void BlockEventPublisher::run() {
  using Clock = std::chrono::steady_clock;
  auto next_digest = Clock::now() + opt_.digest_interval;
  std::vector<route::WireEvent> batch;
  for (bool last = false; !last;) {
    route::ReplicaDigest digest;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, opt_.batch_interval, [&] { return stop_; });
      last = stop_;
      batch.swap(queue_);
      digest = stats_.digest;
    }
    for (size_t at = 0; at < batch.size(); at += opt_.max_batch_events) {
      route::EventMessage m;
      m.type = route::EventMessage::Type::kEvents;
      const auto first = batch.begin() + static_cast<std::ptrdiff_t>(at);
      m.events.assign(first, first + static_cast<std::ptrdiff_t>(std::min(opt_.max_batch_events, batch.size() - at)));
      send(m);
    }
    batch.clear();
    if (const auto now = Clock::now(); now >= next_digest || last) {
      route::EventMessage m;
      m.type = route::EventMessage::Type::kDigest;
      m.digest = digest;
      send(m);
      next_digest = now + opt_.digest_interval;
    }
  }
}

}  // namespace kvgate::serving
