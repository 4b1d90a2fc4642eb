// InternalApi: the routes a replica serves its route front
// (replica_wire.h has the formats), when [cluster] internal_token_file is
// set:
//
//   POST /internal/v1/generate   run one request the front admitted, as
//                                token ids; stream its ids and its result
//   POST /internal/v1/cancel/ID  end a request early (its stream still
//                                ends with its done line)
//   GET  /internal/v1/info       the replica's cache identity, bounds, load
//   GET  /internal/v1/blocks     every block it holds, the publisher's
//                                snapshot as a block-event message (404
//                                when it publishes no block events)
//
// Each needs `Authorization: Bearer <internal token>` (401 otherwise). The
// front has authenticated, admitted, tokenized and will bill the request:
// here it is only checked against the engine's own bounds (400) and
// submitted (503 with retry-after when the engine is full or failed). A
// front that goes away cancels its request, as a client of the /v1 routes
// does.
//
// Thread ownership: operator() on an I/O thread; the stream's tokens and
// its done line are written from the engine loop, never blocking (Reply is
// thread-safe and queues); the snapshot on the I/O thread (the publisher is
// thread-safe). Holds nothing mutable of its own.
#pragma once

#include <string>
#include <string_view>

#include "cache/tiers/kv_identity.h"
#include "engine/sched/engine.h"
#include "gateway/server/http_request.h"
#include "gateway/server/reply.h"
#include "gateway/serving/output_grammars.h"
#include "gateway/cluster/replica/block_event_publisher.h"
#include "gateway/cluster/wire/internal_token.h"

namespace kvgate::replica {

class InternalApi {
 public:
  // `identity`: the engine's cache identity as the tiers and block events
  // state it (tier_identity.h); `block_events`: the publisher's bound
  // endpoint, or empty; `publisher`: the one whose snapshot /blocks
  // answers (null: 404), outliving this; `grammars`: what compiles a
  // request's output grammar (null: such a request is a 400), outliving this.
  InternalApi(Engine& engine, wire::InternalToken token, std::string model, cache::KvIdentity identity,
              std::string block_events, BlockEventPublisher* publisher = nullptr,
              serving::OutputGrammars* grammars = nullptr);

  // Any path under /internal/ (404 for one it does not serve). Answers
  // every failure itself, in OpenAI's error shape.
  void operator()(const server::HttpRequest& req, server::Reply& reply) const;

 private:
  void route(const server::HttpRequest& req, server::Reply& reply) const;
  void generate(const server::HttpRequest& req, server::Reply& reply) const;
  void cancel(std::string_view id, server::Reply& reply) const;
  void info(server::Reply& reply) const;
  void blocks(server::Reply& reply) const;

  Engine& engine_;
  const wire::InternalToken token_;
  const std::string model_;
  const cache::KvIdentity identity_;
  const std::string block_events_;
  BlockEventPublisher* const publisher_;  // thread-safe; null without block events
  serving::OutputGrammars* const grammars_;  // thread-safe
};

}  // namespace kvgate::replica
