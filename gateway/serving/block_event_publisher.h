// BlockEventPublisher: a replica's block events on a ZeroMQ PUB socket, so
// that a route front (gateway/route/) knows what each replica holds.
//
// It listens to the device pool and to the host and disk tiers
// (cache/block_event.h): a listener call only appends to a queue under a
// mutex. The publisher's own thread owns the socket (a ZeroMQ socket is not
// thread-safe): every batch interval it sends what was queued as one
// events message (event_wire.h), and every digest interval a digest of
// what the replica holds per tier, counted from every event it was told,
// sent or not. An event that finds the queue full is not sent (counted),
// and the next digest then tells the front that its view is wrong.
//
// The front subscribes to the endpoint; messages sent while no one is
// subscribed are lost, which the sequence numbers and digests reveal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache/block_event.h"
#include "cache/tiers/kv_identity.h"
#include "gateway/route/event_wire.h"

namespace kvgate::serving {

struct BlockEventPublisherOptions {
  std::string endpoint;                       // to bind, e.g. tcp://127.0.0.1:5557 (port 0: any free one)
  cache::KvIdentity identity;                 // the engine's cache identity, stated in every message
  std::chrono::milliseconds batch_interval{10};
  std::chrono::milliseconds digest_interval{1000};
  size_t queue_events = size_t{1} << 20;      // queued and not yet sent; past it, events are dropped (counted)
  size_t max_batch_events = 8192;             // per message
};

struct BlockEventPublisherStats {
  int64_t events = 0;    // told by the pool and the tiers
  int64_t sent = 0;      // in a message sent
  int64_t dropped = 0;   // the queue was full
  int64_t messages = 0;  // events and digest messages sent
  route::ReplicaDigest digest{};  // what the replica holds, by every event told
};

class BlockEventPublisher final : public cache::BlockEventListener {
 public:
  // Binds the socket and starts the thread. Throws kvgate::Error naming the
  // endpoint when it cannot be bound.
  explicit BlockEventPublisher(BlockEventPublisherOptions options);
  ~BlockEventPublisher() override;  // sends what is queued, then closes
  BlockEventPublisher(const BlockEventPublisher&) = delete;
  BlockEventPublisher& operator=(const BlockEventPublisher&) = delete;

  // Any thread; quick (a copy into the queue).
  void on_block_event(const cache::BlockEvent& e) override;

  // The endpoint as bound (the port chosen when 0 was asked for).
  const std::string& endpoint() const { return bound_; }
  uint64_t instance() const { return instance_; }
  BlockEventPublisherStats stats() const;

 private:
  void run();
  void send(route::EventMessage& m);

  const BlockEventPublisherOptions opt_;
  const uint64_t instance_;
  std::string bound_;
  struct Socket;
  std::unique_ptr<Socket> socket_;  // the thread's only, once it runs

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                       // guarded by mu_
  std::vector<route::WireEvent> queue_;     // guarded by mu_
  BlockEventPublisherStats stats_;          // guarded by mu_
  uint64_t seq_ = 0;                        // the thread's
  std::thread thread_;
};

}  // namespace kvgate::serving
