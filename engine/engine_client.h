// EngineClient: the engine as its clients see it (vLLM's name for the same
// seam): what runs a Request and streams its tokens back to the serving
// pipeline. On `kvgate serve` it is the Engine on this machine
// (engine/sched/engine.h); on `kvgate route` it is one of several replicas,
// reached over the network (gateway/cluster/front/remote_engine.h). The pipeline around it
// (quotas, stop strings, the ledger) is the same code in both.
//
// Threads: every method from any thread. The callback's contract is
// RequestStream's: each token in order, then the completion once; it must
// return quickly and never block.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"
#include "cache/tiers/kv_identity.h"
#include "engine/request.h"
#include "engine/sched/request_limits.h"
#include "engine/sched/request_stream.h"
#include "engine/sched/scheduler.h"
#include "engine/submitter.h"

namespace kvgate {

// The engine is full (the Engine's max_outstanding, or every replica): try again later.
class EngineBusy : public Error {
 public:
  using Error::Error;
};

// The backend failed for good (Backend::failure(), or no replica is live): nothing more can run.
class EngineFailed : public Error {
 public:
  using Error::Error;
};

// What all pins together may hold in the device pool beside what they
// hold now, and one tenant's default pin quota (Scheduler's pin bounds).
struct PinRoom {
  int32_t pinned = 0;          // blocks pinned now, as last published
  int32_t max_pinned = 0;      // the server-wide cap
  int32_t tenant_default = 0;  // a tenant's pin quota when its own is unset
};

class EngineClient {
 public:
  // Told, before the first token can arrive, the request's id and where it
  // runs ("" on this machine; a replica's URL on a front), and again, from
  // another thread but still before the first token, if it moves (a front's
  // retry elsewhere): a copy is kept as long as the request runs.
  using OnPlaced = std::function<void(RequestId id, std::string_view where)>;

  virtual ~EngineClient() = default;

  // Starts `req`; throws kvgate::Error for one that could never run,
  // EngineBusy when full, EngineFailed when nothing more can run.
  virtual RequestId start(Request req, Submitter who, RequestStream::Callback cb, const OnPlaced& placed) = 0;
  // Ends a request early (its completion still comes); unknown ids are ignored.
  virtual void cancel(RequestId id) = 0;

  // What requests are checked against before any quota is charged.
  virtual const RequestBounds& bounds() const = 0;
  // What the prompt's chain is hashed with at the edge (Scheduler::
  // cache_identity); none when the prefix cache is off.
  virtual const std::optional<cache::KvIdentity>& cache_identity() const = 0;
  // Blocks `tenant` has pinned, as last published (0 where unknown: the
  // engine that pins re-checks the tenant's quota).
  virtual int32_t pinned_blocks(TenantId tenant) const = 0;
  // The pool's pin bounds and what all pins hold, for the gateway's check
  // before a pin; none where unknown (a front: the replica that pins checks).
  virtual std::optional<PinRoom> pin_room() const { return std::nullopt; }
  // Why no request can run now, or empty (/health answers 503 with it).
  virtual std::string failure() const = 0;
};

}  // namespace kvgate
