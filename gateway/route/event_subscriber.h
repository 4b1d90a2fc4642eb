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
//   - digest: the replica's own count and sums per tier, compared with the
//     same sums over what the front applied; a difference marks the view as
//     disagreeing (view_agrees = false) until a digest matches again.
// A message that does not decode is dropped and counted.
//
// Thread ownership: watch(), feed() and feeds() from any thread, before or
// after start(); the thread owns the sockets' reads.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache/tiers/kv_identity.h"
#include "gateway/route/event_wire.h"
#include "gateway/route/replica_index.h"

namespace kvgate::route {

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
  ReplicaDigest view{};         // the same sums over what the front applied
};

class EventSubscriber {
 public:
  // `index` and `index_mu` are the front's; every change to the index is
  // made holding `index_mu`.
  EventSubscriber(ReplicaIndex& index, std::mutex& index_mu, cache::KvIdentity mine);
  ~EventSubscriber();  // stops the thread
  EventSubscriber(const EventSubscriber&) = delete;
  EventSubscriber& operator=(const EventSubscriber&) = delete;

  // Replica r (already in the index) publishes at `endpoint`; once per replica.
  void watch(ReplicaId r, std::string endpoint);
  void start();

  ReplicaFeed feed(ReplicaId r) const;
  // Every watched replica's feed, by id.
  std::vector<std::pair<ReplicaId, ReplicaFeed>> feeds() const;

  // What the thread does with one message from r (tests drive it directly).
  void apply(ReplicaId r, const EventMessage& m);
  // The same for raw bytes: decoded, or dropped and counted.
  void apply_bytes(ReplicaId r, std::span<const std::byte> bytes);

 private:
  void run();

  ReplicaIndex& index_;
  std::mutex& index_mu_;
  const cache::KvIdentity mine_;

  struct Watched;
  std::vector<std::unique_ptr<Watched>> watched_;  // grows under mu_; each Watched stays put
  mutable std::mutex mu_;                          // guards every Watched's feed
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace kvgate::route
