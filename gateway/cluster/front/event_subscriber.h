// EventSubscriber: the route front's side of the block events. One ZeroMQ
// SUB socket per replica (so a message's replica is the socket it came
// on), read by one thread, each message decoded (event_wire.h) and applied
// to the ReplicaIndex under the caller's mutex.
//
// What it checks, per replica:
//   - cache identity: a replica whose identity differs from the front's is
//     not scored (its hashes do not mean ours): its events are not applied,
//     its feed says why (mismatch, mismatch_field), and a log line says so
//     once per change. It still serves; the router gives it no prefix credit.
//   - instance: a new one means the replica restarted; what the index held
//     for it is cleared and its sequence begins again.
//   - sequence: a message after a gap is applied and the gap counted (its
//     events were lost: the view is behind until the replica is resynced).
//     A message of seq <= the last one applied is stale and dropped.
//   - digest: the replica's own count and sums per tier, compared with the
//     same sums over what the front applied; a difference marks the view as
//     disagreeing (view_agrees = false) until a digest matches again.
// A message that does not decode is dropped and counted; one longer than
// wire::kMaxSocketMessageBytes is refused by ZeroMQ before it is read.
// The socket is the CURVE client of the replica's (block_event_publisher.h):
// it pins the replica's key and proves the front's, both from the token.
//
// Resync: a feed wants_resync after a gap, a digest that disagreed, or
// when the first message heard of an instance is past seq 1 (the front
// subscribed late: what the replica already held, a disk tier's blocks
// found at open, was never told it). The owner (front/replica_set.h) then
// calls begin_resync(r), fetches the replica's snapshot (GET
// /internal/v1/blocks: every block it holds, as one events message whose
// seq S covers exactly the messages of seq <= S) and calls resync(r,
// snapshot). From begin_resync on, every message applied for r is also
// kept; resync() clears r in the index, applies the snapshot, then the
// kept messages of seq > S in order. That is exact: the snapshot was taken
// after begin_resync, so every message of seq > S arrives after it, and is
// kept (one lost on the way leaves a hole after S: the feed still wants a
// resync). Digests kept during a resync are compared only then, against
// the view rebuilt up to their seq.
//
// Thread ownership: watch(), feed(), feeds(), begin_resync(), resync() and
// abandon_resync() from any thread, before or after start(); the thread
// owns the sockets' reads.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cache/tiers/kv_identity.h"
#include "gateway/cluster/wire/event_keys.h"
#include "gateway/cluster/wire/event_wire.h"
#include "gateway/cluster/route/replica_index.h"
#include "gateway/cluster/route/route_policy.h"

namespace kvgate::front {

// What the front knows of one replica's event stream.
struct ReplicaFeed {
  std::string endpoint;
  bool heard = false;           // a message has arrived
  bool scorable = false;        // heard, and its identity is ours
  std::string mismatch;         // why not scorable ("block_size 32, ours 16"); empty when it is
  std::string mismatch_field;   // the same as a metric label ("block_size")
  uint64_t instance = 0, last_seq = 0;
  int64_t messages = 0, events = 0, bad_messages = 0;
  int64_t gaps = 0, lost_messages = 0, restarts = 0;
  int64_t digests = 0, digest_mismatches = 0;
  bool view_agrees = true;      // the last digest matched what the front applied
  wire::ReplicaDigest view{};         // the same sums over what the front applied
  bool wants_resync = false;    // a gap, a digest mismatch or a late start: the view needs a snapshot
  bool resyncing = false;       // between begin_resync() and resync() or abandon_resync()
  int64_t resyncs = 0;          // snapshots applied
};

class EventSubscriber {
 public:
  // `index` and `index_mu` are the front's; every change to the index is
  // made holding `index_mu`.
  // `keys`: the block events' CURVE keys, from the internal token the
  // front shares with its replicas (event_keys.h).
  EventSubscriber(route::ReplicaIndex& index, std::mutex& index_mu, cache::KvIdentity mine, wire::EventCurveKeys keys);
  ~EventSubscriber();  // stops the thread
  EventSubscriber(const EventSubscriber&) = delete;
  EventSubscriber& operator=(const EventSubscriber&) = delete;

  // Replica r (already in the index) publishes at `endpoint`; once per replica.
  void watch(route::ReplicaId r, std::string endpoint);
  void start();

  ReplicaFeed feed(route::ReplicaId r) const;
  // Every watched replica's feed, by id.
  std::vector<std::pair<route::ReplicaId, ReplicaFeed>> feeds() const;
  // Clears states[r].scorable for each replica r whose feed is not scorable
  // or that is not watched: what a route decision needs of the feeds,
  // without copying them.
  void keep_scorable(std::span<route::ReplicaState> states) const;

  // What the thread does with one message from r (tests drive it directly).
  void apply(route::ReplicaId r, const wire::EventMessage& m);
  // The same for raw bytes: decoded, or dropped and counted.
  void apply_bytes(route::ReplicaId r, std::span<const std::byte> bytes);

  // Keeps every message applied for r from now on (again from empty when
  // already keeping), until resync() or abandon_resync(). At most
  // kMaxResyncKept events are kept: past that the resync that follows is
  // refused (the snapshot alone would lose what came after it), and the
  // feed still wants one.
  void begin_resync(route::ReplicaId r);
  // Applies `snapshot` (an events message of kStored events, taken after
  // begin_resync(r)) as what r holds: the index's blocks of r and the view
  // rebuilt from it, then the messages kept of seq > snapshot.seq, in
  // order; last_seq the greater of the two; resyncs counted; wants_resync
  // cleared unless a message after the snapshot was lost. A snapshot of
  // another instance than the feed's is a restart (counted; the kept
  // messages, the old instance's, dropped), except one of the instance the
  // feed has left since (the replica restarted after answering): that one
  // is stale and ignored. Returns whether it was applied. Throws
  // RouteError when r is not watched, no begin_resync(r) is pending, or
  // the message is a digest.
  bool resync(route::ReplicaId r, const wire::EventMessage& snapshot);
  // The snapshot could not be had: stop keeping messages (wants_resync stays).
  void abandon_resync(route::ReplicaId r);

  static constexpr size_t kMaxResyncKept = size_t{1} << 20;

 private:
  struct Watched;
  void run();
  Watched& find(route::ReplicaId r);  // mu_ held
  // The identity and instance checks of a message or a snapshot (mu_ held).
  void check_header(Watched& w, const wire::EventMessage& m);
  // Applies the events of `m` to the index and the view (mu_ and the
  // index's mutex held; the feed scorable).
  void apply_events(Watched& w, const wire::EventMessage& m);

  route::ReplicaIndex& index_;
  std::mutex& index_mu_;
  const cache::KvIdentity mine_;
  const wire::EventCurveKeys keys_;

  std::vector<std::unique_ptr<Watched>> watched_;  // grows under mu_; each Watched stays put
  mutable std::mutex mu_;                          // guards every Watched's feed
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace kvgate::front
