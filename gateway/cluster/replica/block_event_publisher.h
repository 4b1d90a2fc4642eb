// BlockEventPublisher: a replica's block events on a ZeroMQ PUB socket, so
// that a route front (gateway/route/) knows what each replica holds.
//
// It listens to the device pool and to the host and disk tiers
// (cache/block_event.h): a listener call only appends to a queue and
// updates the set of blocks held, under a mutex. The publisher's own thread owns the socket (a ZeroMQ socket is not
// thread-safe): every batch interval it sends what was queued as one
// events message (event_wire.h), and every digest interval a digest of
// what the replica holds per tier, counted from every event it was told,
// sent or not. An event that finds the queue full is not sent (counted),
// and the next digest then tells the front that its view is wrong.
//
// The socket is a CURVE server with keys derived from the internal token
// (event_keys.h): events are encrypted on the wire, and a ZAP handler on
// the publisher's own ZeroMQ context admits only a subscriber that proves
// the front's key, so only a holder of the token reads them. The send
// queue is bounded in bytes (wire::kSocketQueueBytes); a subscriber that
// does not read loses messages, never the replica's memory.
//
// The front subscribes to the endpoint; messages sent while no one is
// subscribed are lost, which the sequence numbers and digests reveal. A
// front that finds its view wrong (a gap, a digest that disagrees, a first
// message past seq 1) asks for snapshot() (GET /internal/v1/blocks,
// internal_api.h): every block held now, per tier, as one events message
// whose seq says exactly which batches it covers.
//
// Sequence numbers are assigned under the mutex, in the order things were
// told: a batch gets its number when it is closed (when the thread takes
// it, when it reaches max_batch_events, or when a snapshot is taken), a
// digest when it is taken. So a snapshot of seq S holds every event in a
// message of seq <= S and none of a later one, and a digest of seq D
// describes every event told before D was assigned, dropped ones included.
// The snapshot is the truth: an event dropped for a full queue is still in
// it, so a resync also repairs drops.
#pragma once

#include <chrono>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cache/block_event.h"
#include "cache/tiers/kv_identity.h"
#include "gateway/cluster/wire/event_keys.h"
#include "gateway/cluster/wire/event_wire.h"

namespace kvgate::replica {

struct BlockEventPublisherOptions {
  std::string endpoint;                       // to bind, e.g. tcp://127.0.0.1:5557 (port 0: any free one)
  wire::EventCurveKeys keys;                  // from the internal token (event_keys.h)
  cache::KvIdentity identity;                 // the engine's cache identity, stated in every message
  std::chrono::milliseconds batch_interval{10};
  std::chrono::milliseconds digest_interval{1000};
  size_t queue_events = size_t{1} << 20;      // queued and not yet sent; past it, events are dropped (counted)
  size_t max_batch_events = wire::kMaxSocketEvents;  // per message, at most that
};

struct BlockEventPublisherStats {
  int64_t events = 0;    // told by the pool and the tiers
  int64_t sent = 0;      // in a message sent
  int64_t dropped = 0;   // the queue was full
  int64_t messages = 0;  // events and digest messages sent
  int64_t snapshots = 0; // snapshot() calls
  int64_t refused_subscribers = 0;  // ZAP: a CURVE client key that is not the front's
  wire::ReplicaDigest digest{};  // what the replica holds, by every event told
};

class BlockEventPublisher final : public cache::BlockEventListener {
 public:
  // Binds the socket and starts the threads. Throws kvgate::Error naming the
  // endpoint when it cannot be bound, or a batch past kMaxSocketEvents.
  explicit BlockEventPublisher(BlockEventPublisherOptions options);
  ~BlockEventPublisher() override;  // sends what is queued, then closes
  BlockEventPublisher(const BlockEventPublisher&) = delete;
  BlockEventPublisher& operator=(const BlockEventPublisher&) = delete;

  // Any thread; quick (a copy into the queue).
  void on_block_event(const cache::BlockEvent& e) override;

  // Any thread: every block held now, per tier, as kStored events in one
  // events message (type kEvents, this instance and identity) whose seq is
  // the last one assigned: the open batch is closed first, so the snapshot
  // covers exactly the events of every message of seq <= its own, and the
  // next message sent is seq + 1. Built under the mutex (the pool and the
  // tiers wait meanwhile: about 20 ns a block).
  wire::EventMessage snapshot();

  // The endpoint as bound (the port chosen when 0 was asked for).
  const std::string& endpoint() const { return bound_; }
  uint64_t instance() const { return instance_; }
  BlockEventPublisherStats stats() const;

 private:
  void run();
  // Answers ZeroMQ's authentication requests for the socket (RFC 27, ZAP).
  void authenticate();
  void send(wire::EventMessage& m);
  // The open batch, when not empty, becomes the next message (mu_ held).
  void close_batch();

  // What a held block's stored event said besides its hash and tier.
  struct Held {
    cache::BlockHash parent;
    TenantId tenant = 0;
    int32_t depth = 0;
  };
  using HeldTier = std::unordered_map<cache::BlockHash, Held, cache::Hash128Hasher>;

  const BlockEventPublisherOptions opt_;
  const uint64_t instance_;
  std::string bound_;
  struct Socket;
  std::unique_ptr<Socket> socket_;  // the thread's only, once it runs

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                       // guarded by mu_
  std::vector<wire::WireEvent> open_;      // guarded by mu_: the batch being filled, no seq yet
  std::deque<wire::EventMessage> closed_;  // guarded by mu_: seq assigned, in seq order, not yet sent
  size_t queued_ = 0;                       // guarded by mu_: events in open_ and closed_
  std::array<HeldTier, wire::kWireTiers> held_;  // guarded by mu_: every block held, by every event told
  BlockEventPublisherStats stats_;          // guarded by mu_
  uint64_t seq_ = 0;                        // guarded by mu_: the last seq assigned
  std::atomic<bool> zap_stop_{false};
  std::atomic<int64_t> refused_subscribers_{0};
  std::thread zap_thread_;  // owns socket_->zap
  std::thread thread_;      // owns socket_->pub
};

}  // namespace kvgate::replica
