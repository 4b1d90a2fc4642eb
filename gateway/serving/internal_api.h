// InternalApi: the routes a replica serves its route front
// (replica_wire.h has the formats), when [cluster] internal_token_file is
// set:
//
//   POST /internal/v1/generate   run one request the front admitted, as
//                                token ids; stream its ids and its result
//   POST /internal/v1/cancel/ID  end a request early (its stream still
//                                ends with its done line)
//   GET  /internal/v1/info       the replica's cache identity, bounds, load
//
// Both need `Authorization: Bearer <internal token>` (401 otherwise). The
// front has authenticated, admitted, tokenized and will bill the request:
// here it is only checked against the engine's own bounds (400) and
// submitted (503 with retry-after when the engine is full or failed). A
// front that goes away cancels its request, as a client of the /v1 routes
// does.
//
// Thread ownership: operator() on an I/O thread; the stream's tokens and
// its done line are written from the engine loop, never blocking (Reply is
// thread-safe and queues). Holds nothing mutable of its own.
#pragma once

#include <string>
#include <string_view>

#include "cache/tiers/kv_identity.h"
#include "engine/sched/engine.h"
#include "gateway/server/http_request.h"
#include "gateway/server/reply.h"
#include "gateway/serving/internal_token.h"

namespace kvgate::serving {

class InternalApi {
 public:
  // `identity`: the engine's cache identity as the tiers and block events
  // state it (tier_identity.h); `block_events`: the publisher's bound
  // endpoint, or empty.
  InternalApi(Engine& engine, InternalToken token, std::string model, cache::KvIdentity identity,
              std::string block_events);

  // Any path under /internal/ (404 for one it does not serve). Answers
  // every failure itself, in OpenAI's error shape.
  void operator()(const server::HttpRequest& req, server::Reply& reply) const;

 private:
  void route(const server::HttpRequest& req, server::Reply& reply) const;
  void generate(const server::HttpRequest& req, server::Reply& reply) const;
  void cancel(std::string_view id, server::Reply& reply) const;
  void info(server::Reply& reply) const;

  Engine& engine_;
  const InternalToken token_;
  const std::string model_;
  const cache::KvIdentity identity_;
  const std::string block_events_;
};

}  // namespace kvgate::serving
