// ReplicaSet: the `kvgate serve` replicas behind a route front, as the front
// sees them: where each is (its URL and a keep-alive HTTPS pool to it),
// whether it is in rotation, what it said it is when it registered, what it
// holds (its block events, through the EventSubscriber, into a
// ReplicaIndex), and the load the front itself has placed on it.
//
// Rotation: every health interval the front asks each replica for
// /internal/v1/info (its registration: model, cache identity, bounds, block
// events endpoint). An answer puts it in rotation, a failure takes it out,
// and so does a request that cannot reach it (mark_down), at once. A
// replica whose cache identity (at registration or in its events) differs
// from the front's stays in rotation but is not scorable: the policy gives
// it no prefix credit, and unscorable() says why.
//
// Resync: on the same tick, a replica whose block-event feed wants a
// resync (a gap, a digest that disagreed, a front that subscribed after
// the replica had published: event_subscriber.h) and has none in flight,
// at most once a second, is asked for its snapshot (GET
// /internal/v1/blocks), which the subscriber applies. A failure is logged
// (once until one succeeds), counted, and retried on a later tick, the
// wait doubling to at most a minute while they fail.
//
// Threads: one I/O thread of its own runs every exchange with the replicas
// (health checks and the requests of remote_engine.h); choose(),
// mark_down(), add_load() and snapshot() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "cache/tiers/kv_identity.h"
#include "base/mutex.h"
#include "gateway/client/connection_pool.h"
#include "gateway/cluster/front/event_subscriber.h"
#include "gateway/cluster/route/replica_index.h"
#include "gateway/cluster/route/route_policy.h"
#include "gateway/cluster/route/sticky_routes.h"
#include "gateway/cluster/wire/replica_wire.h"

namespace kvgate::front {

using route::ReplicaId;

struct ReplicaSetOptions {
  std::vector<std::string> urls;  // https://host:port of each replica
  std::string ca_file;            // PEM bundle the replicas' certificates chain to; empty: the system's
  std::string token;              // the internal token every replica requires
  std::chrono::milliseconds health_interval{500};
  cache::KvIdentity mine;         // the front's cache identity: what its chains mean
  std::string route_policy = "cache_aware";
};

// One replica's state, copied out for metrics and logs.
struct ReplicaView {
  std::string url;
  bool up = false;
  bool registered = false;   // it has answered /internal/v1/info at least once
  bool scorable = false;
  std::string mismatch;      // why not scorable, for people ("block_size 32, ours 16")
  std::string mismatch_field;
  int64_t load_tokens = 0;   // placed by this front and not yet finished
  int64_t placed = 0, retries_from = 0, stream_errors = 0;
  int64_t resyncs = 0;          // snapshots of its blocks applied (the feed's count)
  int64_t resync_failures = 0;  // snapshots asked for and not applied
  ReplicaFeed feed;
};

class ReplicaSet {
 public:
  // Resolves every URL (an Error naming the one that does not) and starts
  // the I/O thread, the health checks and the block-event subscriber.
  explicit ReplicaSet(ReplicaSetOptions opt);
  ~ReplicaSet();
  ReplicaSet(const ReplicaSet&) = delete;
  ReplicaSet& operator=(const ReplicaSet&) = delete;

  size_t size() const { return replicas_.size(); }
  const std::string& url(route::ReplicaId r) const;
  const std::string& token() const { return opt_.token; }
  // The pool to replica r: used on io() only.
  client::ConnectionPool& pool(route::ReplicaId r);
  boost::asio::io_context& io() { return io_; }

  // The replica for a request by the policy over those in rotation (never
  // `avoid`, the one a retry moves away from); nothing when none is up.
  std::optional<route::ReplicaId> choose(const route::RouteRequest& request, std::optional<route::ReplicaId> avoid = {});
  // A request could not reach r: out of rotation until a health check answers.
  void mark_down(route::ReplicaId r, const std::string& why);
  void add_load(route::ReplicaId r, int64_t tokens);
  void count_retry(route::ReplicaId from);
  void count_stream_error(route::ReplicaId r);

  // The smallest bounds over the registered replicas (what a request must
  // fit wherever it lands), or nothing before any has registered.
  std::optional<RequestBounds> bounds() const;
  std::vector<ReplicaView> snapshot() const;
  std::string policy_name() const;

 private:
  struct Replica;
  void check_health();
  void on_info(route::ReplicaId r, int status, const std::string& body, const std::string& error);
  void maybe_resync(Replica& rep);
  void on_blocks(route::ReplicaId r, int status, const std::string& body, const std::string& error);
  void set_up(Replica& rep, bool up, const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ReplicaSetOptions opt_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer health_timer_;
  std::vector<std::unique_ptr<Replica>> replicas_;  // fixed after construction

  mutable Mutex mu_;  // every Replica's mutable state

  // Each replica's feed by id (a default one, not scorable, before its events are watched).
  std::vector<ReplicaFeed> event_feeds() const;

  mutable std::mutex index_mu_;  // the index and the policy (the subscriber applies events under it)
  route::ReplicaIndex index_;
  std::unique_ptr<route::RoutePolicy> policy_;
  route::StickyRoutes sticky_;  // prompt_cache_key's bindings; under index_mu_, as the policy
  front::EventSubscriber events_;

  std::thread thread_;  // last: runs io_ once everything above exists
};

}  // namespace kvgate::front
