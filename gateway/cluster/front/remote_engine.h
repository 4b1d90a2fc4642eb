// RemoteEngine: the route front's EngineClient. The serving pipeline (quotas,
// stop strings, the ledger) runs on the front exactly as on `kvgate serve`;
// where `kvgate serve` hands a request to its Engine, the front hands it to
// this, which sends it to one replica over the internal link
// (gateway/serving/replica_wire.h) and streams its tokens back.
//
//   placement  the prompt's chain, hashed at the edge by the pipeline, is
//              scored against what each replica holds (ReplicaSet::choose);
//              the request's prompt + max_tokens count as that replica's
//              load until it ends.
//   retry      a replica that fails before its first token (cannot be
//              reached, refuses with 5xx, the connection drops) is taken
//              out of rotation if unreachable and the request is sent once
//              more, elsewhere. The client sees nothing of it.
//   mid-stream a replica that fails after its first token cannot be retried
//              (the client has text): the request ends with an error, which
//              the pipeline turns into an error frame; the prompt is billed
//              as fresh prefill with the tokens delivered, since the
//              replica's own accounting never arrived.
//   cancel     (a stop string matched, the client went away) the replica
//              is asked to end the request, and its stream ends as usual,
//              with the accounting; if that call fails the connection is
//              closed, which cancels it there too, and what was delivered
//              is billed as above.
//
// Threads: start() and cancel() from any thread; everything else on the
// ReplicaSet's I/O thread, where the callback runs (it must not block).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <unordered_map>

#include "base/mutex.h"
#include "engine/engine_client.h"
#include "gateway/cluster/front/replica_set.h"

namespace kvgate::front {

class RemoteEngine : public EngineClient {
 public:
  // `identity`: what the front hashes chains with (the replicas' own,
  // checked at registration); `bounds`: the model's (context, vocabulary,
  // block size); a request is also checked against the registered
  // replicas' smallest pool.
  RemoteEngine(ReplicaSet& replicas, std::optional<cache::KvIdentity> identity, RequestBounds bounds);
  ~RemoteEngine() override;

  RequestId start(Request req, Submitter who, RequestStream::Callback cb, const OnPlaced& placed) override;
  void cancel(RequestId id) override;
  const RequestBounds& bounds() const override { return bounds_; }
  const std::optional<cache::KvIdentity>& cache_identity() const override { return identity_; }
  int32_t pinned_blocks(TenantId) const override { return 0; }  // the replica that pins checks the quota
  std::string failure() const override;

  // Ends every request in flight (each completes as cancelled) and waits
  // until their completions have run.
  void shutdown();

 public:
  struct Flight;  // one request in flight (remote_engine.cpp)

 private:
  void send(const std::shared_ptr<Flight>& f);
  void ended(const std::shared_ptr<Flight>& f, const std::string& error);
  void complete(Flight& f, Completion c);

  ReplicaSet& replicas_;
  const std::optional<cache::KvIdentity> identity_;
  const RequestBounds bounds_;
  std::atomic<RequestId> next_id_{1};
  Mutex mu_;
  CondVar drained_;
  std::unordered_map<RequestId, std::shared_ptr<Flight>> flights_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kvgate::front
